// Races RACERS creates of one key through an SDK helper, each with
// If-None-Match: *, and prints each racer's outcome as a JSON array of
// {racer, ok, status, code}. The e2e workloads (e2e/workloads_node_test.go)
// run it through s3cond and straight against a store without conditional
// writes.
//
//   node sdk_create_race.mjs lib-storage ENDPOINT BUCKET KEY RACERS SIZE
//   node sdk_create_race.mjs minio       ENDPOINT BUCKET KEY RACERS SIZE
//
// lib-storage: @aws-sdk/lib-storage's Upload with IfNoneMatch "*" and 5 MiB
// parts; a SIZE over 5 MiB makes it a multipart upload, and Upload passes
// IfNoneMatch on to CompleteMultipartUpload. minio: minio-js putObject
// with an If-None-Match header in its metadata argument (one of the
// headers it sends as such). Every racer's body starts with "racer N|".
// Credentials come from AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY.
import { S3Client } from "@aws-sdk/client-s3";
import { Upload } from "@aws-sdk/lib-storage";
import * as Minio from "minio";

const [helper, endpoint, bucket, key, racers, size] = process.argv.slice(2);
const accessKeyId = process.env.AWS_ACCESS_KEY_ID;
const secretAccessKey = process.env.AWS_SECRET_ACCESS_KEY;

function body(racer) {
  const buf = Buffer.alloc(Number(size), 0x61 + (racer % 26));
  buf.write(`racer ${racer}|`);
  return buf;
}

async function withLibStorage(racer) {
  const client = new S3Client({ endpoint, region: "us-east-1", forcePathStyle: true, maxAttempts: 1,
    credentials: { accessKeyId, secretAccessKey } });
  const upload = new Upload({ client, partSize: 5 * 1024 * 1024, queueSize: 2,
    params: { Bucket: bucket, Key: key, Body: body(racer), IfNoneMatch: "*" } });
  await upload.done();
}

async function withMinio(racer) {
  const url = new URL(endpoint);
  const client = new Minio.Client({ endPoint: url.hostname, port: Number(url.port), useSSL: url.protocol === "https:",
    accessKey: accessKeyId, secretKey: secretAccessKey, region: "us-east-1", pathStyle: true });
  const data = body(racer);
  await client.putObject(bucket, key, data, data.length, { "If-None-Match": "*" });
}

const send = { "lib-storage": withLibStorage, minio: withMinio }[helper];
if (!send) {
  console.error(`unknown helper ${helper}`);
  process.exit(2);
}
const outcomes = await Promise.all(
  Array.from({ length: Number(racers) }, (_, racer) =>
    send(racer).then(
      () => ({ racer, ok: true, status: 200, code: "" }),
      (err) => ({ racer, ok: false, status: err.$metadata?.httpStatusCode ?? err.statusCode ?? 0,
        code: err.Code ?? err.code ?? err.name ?? "", message: String(err.message).split("\n")[0] }),
    ),
  ),
);
console.log(JSON.stringify(outcomes));
