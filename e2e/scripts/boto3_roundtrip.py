"""Uploads a file with boto3 (single put_object, or upload_file's multipart
transfer), downloads it again and prints {"sha256": ..., "size": ...}.

Usage: python3 boto3_roundtrip.py ENDPOINT BUCKET KEY FILE single|multipart
Credentials come from AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY.
"""
import hashlib
import json
import sys

import boto3
from boto3.s3.transfer import TransferConfig
from botocore.config import Config

endpoint, bucket, key, path, mode = sys.argv[1:6]
s3 = boto3.client(
    "s3",
    endpoint_url=endpoint,
    region_name="us-east-1",
    config=Config(s3={"addressing_style": "path"}, retries={"max_attempts": 1}),
)
if mode == "single":
    with open(path, "rb") as body:
        s3.put_object(Bucket=bucket, Key=key, Body=body)
else:
    mib = 1024 * 1024
    s3.upload_file(path, bucket, key, Config=TransferConfig(multipart_threshold=8 * mib, multipart_chunksize=16 * mib))

digest = hashlib.sha256()
size = 0
for chunk in s3.get_object(Bucket=bucket, Key=key)["Body"].iter_chunks(1024 * 1024):
    digest.update(chunk)
    size += len(chunk)
print(json.dumps({"sha256": digest.hexdigest(), "size": size}))
