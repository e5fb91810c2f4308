// Appends with the AWS SDK for JavaScript v3 (@aws-sdk/client-s3,
// PutObjectCommand's WriteOffsetBytes, with its default checksum), for
// e2e/append_sdks_test.go. Prints one JSON line as compat.mjs does:
// {"ok": true, "version": "<etag> <size>"} on success, or
// {"ok": false, "status": N, "code": "..."} for an S3 error.
//
// Usage: node append.mjs ENDPOINT append BUCKET KEY OFFSET TEXT
// Credentials come from AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY.
import { S3Client, PutObjectCommand, S3ServiceException } from "@aws-sdk/client-s3";

const [endpoint, op, Bucket, Key, offset, text] = process.argv.slice(2);
if (op !== "append") {
  throw new Error(`unknown operation ${op}`);
}
const client = new S3Client({ endpoint, region: "us-east-1", forcePathStyle: true, maxAttempts: 1 });
try {
  const out = await client.send(new PutObjectCommand({
    Bucket, Key, Body: Buffer.from(text), WriteOffsetBytes: Number(offset),
  }));
  console.log(JSON.stringify({ ok: true, version: `${out.ETag} ${out.Size}` }));
} catch (err) {
  if (!(err instanceof S3ServiceException)) {
    throw err;
  }
  console.log(JSON.stringify({
    ok: false, status: err.$metadata?.httpStatusCode ?? 0, code: err.name, message: err.message,
  }));
}
