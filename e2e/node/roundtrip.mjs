// Uploads a file with the AWS SDK for JavaScript v3 (its default checksum
// behaviour: a trailing CRC32 in an aws-chunked body), downloads it again and
// prints {"sha256": ..., "size": ...} of what came back.
// Usage: node roundtrip.mjs ENDPOINT BUCKET KEY FILE single|multipart
// Credentials come from AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY.
import { createHash } from "node:crypto";
import { createReadStream, statSync } from "node:fs";
import {
  S3Client, PutObjectCommand, GetObjectCommand, CreateMultipartUploadCommand,
  UploadPartCommand, CompleteMultipartUploadCommand,
} from "@aws-sdk/client-s3";

const [endpoint, bucket, key, file, mode] = process.argv.slice(2);
const client = new S3Client({ endpoint, region: "us-east-1", forcePathStyle: true, maxAttempts: 1 });
const size = statSync(file).size;
const partSize = 16 * 1024 * 1024;

if (mode === "single") {
  await client.send(new PutObjectCommand({ Bucket: bucket, Key: key, Body: createReadStream(file), ContentLength: size }));
} else {
  const { UploadId } = await client.send(new CreateMultipartUploadCommand({ Bucket: bucket, Key: key }));
  const parts = [];
  for (let start = 0, n = 1; start < size; start += partSize, n++) {
    const end = Math.min(start + partSize, size);
    const out = await client.send(new UploadPartCommand({
      Bucket: bucket, Key: key, UploadId, PartNumber: n,
      Body: createReadStream(file, { start, end: end - 1 }), ContentLength: end - start,
    }));
    parts.push({ ETag: out.ETag, PartNumber: n });
  }
  await client.send(new CompleteMultipartUploadCommand({ Bucket: bucket, Key: key, UploadId, MultipartUpload: { Parts: parts } }));
}

const got = await client.send(new GetObjectCommand({ Bucket: bucket, Key: key }));
const hash = createHash("sha256");
let n = 0;
for await (const chunk of got.Body) {
  hash.update(chunk);
  n += chunk.length;
}
console.log(JSON.stringify({ sha256: hash.digest("hex"), size: n }));
