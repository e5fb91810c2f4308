"""Appends with boto3 (PutObject WriteOffsetBytes, botocore 1.35.70 and
later), for e2e/append_sdks_test.go. Prints one JSON line as
compat_boto3.py does: {"ok": true, "version": "<etag> <size>"} on success,
{"ok": false, "status": N, "code": "..."} for an S3 error.

Usage: python3 append_boto3.py ENDPOINT append BUCKET KEY OFFSET TEXT
The client's default checksum (CRC32 in current botocores) goes with it.
Credentials come from AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY.
"""
import json
import sys

import boto3
from botocore.config import Config
from botocore.exceptions import ClientError


def main():
    endpoint, op, args = sys.argv[1], sys.argv[2], sys.argv[3:]
    if op != "append":
        raise SystemExit(f"unknown operation {op}")
    bucket, key, offset, text = args
    s3 = boto3.client(
        "s3",
        endpoint_url=endpoint,
        region_name="us-east-1",
        config=Config(s3={"addressing_style": "path"}, retries={"max_attempts": 1}),
    )
    try:
        out = s3.put_object(Bucket=bucket, Key=key, Body=text.encode(), WriteOffsetBytes=int(offset))
    except ClientError as err:
        print(json.dumps({
            "ok": False,
            "status": err.response.get("ResponseMetadata", {}).get("HTTPStatusCode", 0),
            "code": err.response.get("Error", {}).get("Code", ""),
            "message": str(err),
        }))
        return
    print(json.dumps({"ok": True, "version": f"{out['ETag']} {out.get('Size')}"}))


if __name__ == "__main__":
    main()
