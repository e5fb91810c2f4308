// Appends tagged rows to one LanceDB table on s3:// (the e2e workload of
// e2e/workloads_node_test.go), or creates or reads the table.
//
//   node lancedb_append.mjs create ENDPOINT URI
//   node lancedb_append.mjs append ENDPOINT URI WRITER APPENDS [START_AT]
//   node lancedb_append.mjs read   ENDPOINT URI
//
// Credentials come from AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY. append
// prints one line per append: "acked TAG" once add() resolved, "failed TAG
// message" if it rejected; with START_AT (milliseconds since the epoch) it
// waits until then after opening the table, so that writers started one
// after another append at the same time. read prints the table's tags as a
// JSON array.
import * as lancedb from "@lancedb/lancedb";

const [mode, endpoint, uri, writer, appends, startAt] = process.argv.slice(2);

const storageOptions = {
  aws_endpoint: endpoint,
  aws_access_key_id: process.env.AWS_ACCESS_KEY_ID,
  aws_secret_access_key: process.env.AWS_SECRET_ACCESS_KEY,
  aws_region: "us-east-1",
  allow_http: "true",
  aws_virtual_hosted_style_request: "false",
};

const db = await lancedb.connect(uri, { storageOptions });

if (mode === "create") {
  await db.createTable("rows", [{ tag: "seed", writer: "seed", seq: 0 }]);
  console.log("created");
} else if (mode === "append") {
  const table = await db.openTable("rows");
  const wait = Number(startAt ?? 0) - Date.now();
  if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
  for (let seq = 1; seq <= Number(appends); seq++) {
    const tag = `${writer}-${seq}`;
    try {
      await table.add([{ tag, writer, seq }]);
      console.log(`acked ${tag}`);
    } catch (err) {
      console.log(`failed ${tag} ${String(err.message || err).split("\n")[0]}`);
    }
  }
} else if (mode === "read") {
  const table = await db.openTable("rows");
  const rows = await table.query().select(["tag"]).toArray();
  console.log(JSON.stringify(rows.map((r) => r.tag)));
} else {
  console.error(`unknown mode ${mode}`);
  process.exit(2);
}
