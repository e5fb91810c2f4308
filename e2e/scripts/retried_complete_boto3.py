"""A CompleteMultipartUpload sent twice with boto3, for
e2e/retries_test.go (TestRetriedCompleteWithBoto3). Prints one JSON line:
the answers of both Completes ({"etag", "location", "bucket", "key",
"checksum_crc32", "checksum_type"}, or {"status", "code"} for an S3 error).

Usage: python3 retried_complete_boto3.py ENDPOINT BUCKET KEY IF_NONE_MATCH
  IF_NONE_MATCH: "*" sends If-None-Match: * on both Completes, "" none.
Credentials come from AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY.
"""
import json
import sys

import boto3
from botocore.config import Config
from botocore.exceptions import ClientError


def answer(call):
    try:
        out = call()
    except ClientError as err:
        return {"status": err.response["ResponseMetadata"]["HTTPStatusCode"], "code": err.response["Error"]["Code"]}
    return {
        "etag": out.get("ETag"),
        "location": out.get("Location"),
        "bucket": out.get("Bucket"),
        "key": out.get("Key"),
        "checksum_crc32": out.get("ChecksumCRC32"),
        "checksum_type": out.get("ChecksumType"),
    }


def main(endpoint, bucket, key, if_none_match):
    s3 = boto3.client(
        "s3",
        endpoint_url=endpoint,
        region_name="us-east-1",
        config=Config(s3={"addressing_style": "path"}, retries={"max_attempts": 1}),
    )
    upload = s3.create_multipart_upload(Bucket=bucket, Key=key, ChecksumAlgorithm="CRC32")["UploadId"]
    part = s3.upload_part(Bucket=bucket, Key=key, UploadId=upload, PartNumber=1, Body=b"one part", ChecksumAlgorithm="CRC32")
    extra = {"IfNoneMatch": if_none_match} if if_none_match else {}
    completed = {"PartNumber": 1, "ETag": part["ETag"]}
    if part.get("ChecksumCRC32"):  # a store that keeps checksums (backend.checksums: forward)
        completed["ChecksumCRC32"] = part["ChecksumCRC32"]
    parts = {"Parts": [completed]}

    def complete():
        return s3.complete_multipart_upload(Bucket=bucket, Key=key, UploadId=upload, MultipartUpload=parts, **extra)

    print(json.dumps({"first": answer(complete), "again": answer(complete)}))


if __name__ == "__main__":
    main(*sys.argv[1:5])
