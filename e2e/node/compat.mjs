// One S3 operation with the AWS SDK for JavaScript v3 (@aws-sdk/client-s3,
// its default checksum behaviour), for the client compatibility matrix
// (e2e/compat_test.go). Prints one JSON line: {"ok": true, ...} on success, or
// {"ok": false, "status": N, "code": "..."} when the server answered with an
// S3 error. Anything else throws and exits non-zero, so the test tells
// "S3 said no" apart from "the client broke".
//
// Usage: node compat.mjs ENDPOINT OP ARGS...
//   version
//   put BUCKET KEY FILE IF_MATCH IF_NONE_MATCH   (empty string: header not sent)
//   get BUCKET KEY OUT_FILE
//   list BUCKET PREFIX
//   multipart BUCKET KEY FILE PART_SIZE_BYTES    (CreateMultipartUpload, UploadPart, Complete)
//   copy BUCKET SOURCE_KEY DEST_KEY
//   delete BUCKET KEY IF_MATCH
// Credentials come from AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY.
import { createReadStream, createWriteStream, statSync } from "node:fs";
import { createRequire } from "node:module";
import { pipeline } from "node:stream/promises";
import {
  S3Client, PutObjectCommand, GetObjectCommand, ListObjectsV2Command, CopyObjectCommand,
  DeleteObjectCommand, CreateMultipartUploadCommand, UploadPartCommand,
  CompleteMultipartUploadCommand, AbortMultipartUploadCommand, S3ServiceException,
} from "@aws-sdk/client-s3";

const [endpoint, op, ...args] = process.argv.slice(2);
const optional = (value) => (value === "" ? undefined : value);

async function run() {
  if (op === "version") {
    const pkg = createRequire(import.meta.url)("@aws-sdk/client-s3/package.json");
    return { version: `@aws-sdk/client-s3 ${pkg.version} (Node ${process.versions.node})` };
  }
  const client = new S3Client({ endpoint, region: "us-east-1", forcePathStyle: true, maxAttempts: 1 });
  switch (op) {
    case "put": {
      const [Bucket, Key, file, ifMatch, ifNoneMatch] = args;
      const out = await client.send(new PutObjectCommand({
        Bucket, Key, Body: createReadStream(file), ContentLength: statSync(file).size,
        IfMatch: optional(ifMatch), IfNoneMatch: optional(ifNoneMatch),
      }));
      return { etag: out.ETag };
    }
    case "get": {
      const [Bucket, Key, file] = args;
      const out = await client.send(new GetObjectCommand({ Bucket, Key }));
      await pipeline(out.Body, createWriteStream(file));
      return {};
    }
    case "list": {
      const [Bucket, Prefix] = args;
      const keys = [];
      let ContinuationToken;
      do {
        const out = await client.send(new ListObjectsV2Command({ Bucket, Prefix, ContinuationToken }));
        keys.push(...(out.Contents ?? []).map((o) => o.Key));
        ContinuationToken = out.NextContinuationToken;
      } while (ContinuationToken);
      return { keys };
    }
    case "multipart": {
      const [Bucket, Key, file, partSizeArg] = args;
      const size = statSync(file).size;
      const partSize = Number(partSizeArg);
      const { UploadId } = await client.send(new CreateMultipartUploadCommand({ Bucket, Key }));
      try {
        const parts = [];
        for (let start = 0, n = 1; start < size; start += partSize, n++) {
          const end = Math.min(start + partSize, size);
          const out = await client.send(new UploadPartCommand({
            Bucket, Key, UploadId, PartNumber: n,
            Body: createReadStream(file, { start, end: end - 1 }), ContentLength: end - start,
          }));
          parts.push({ ETag: out.ETag, PartNumber: n });
        }
        const out = await client.send(new CompleteMultipartUploadCommand({ Bucket, Key, UploadId, MultipartUpload: { Parts: parts } }));
        return { etag: out.ETag };
      } catch (err) {
        await client.send(new AbortMultipartUploadCommand({ Bucket, Key, UploadId })).catch(() => {});
        throw err;
      }
    }
    case "copy": {
      const [Bucket, source, Key] = args;
      const out = await client.send(new CopyObjectCommand({ Bucket, Key, CopySource: `${Bucket}/${source}` }));
      return { etag: out.CopyObjectResult?.ETag };
    }
    case "delete": {
      const [Bucket, Key, ifMatch] = args;
      await client.send(new DeleteObjectCommand({ Bucket, Key, IfMatch: optional(ifMatch) }));
      return {};
    }
    default:
      throw new Error(`unknown operation ${op}`);
  }
}

try {
  console.log(JSON.stringify({ ok: true, ...(await run()) }));
} catch (err) {
  if (!(err instanceof S3ServiceException)) {
    throw err;
  }
  console.log(JSON.stringify({
    ok: false, status: err.$metadata?.httpStatusCode ?? 0, code: err.name, message: err.message,
  }));
}
