"""Stores user metadata with boto3 through PutObject, CopyObject (REPLACE)
and a multipart upload, reads it back with HeadObject and GetObject, and
prints what boto3 reports, as JSON: {"put-head": {...}, "put-get": {...}, ...}.

Usage: python3 metadata_boto3.py ENDPOINT BUCKET
Credentials come from AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY.
"""
import json
import sys

import boto3
from botocore.config import Config

endpoint, bucket = sys.argv[1:3]
s3 = boto3.client(
    "s3",
    endpoint_url=endpoint,
    region_name="us-east-1",
    config=Config(s3={"addressing_style": "path"}, retries={"max_attempts": 1}),
)
seen = {}

s3.put_object(Bucket=bucket, Key="put", Body=b"body", Metadata={"foo": "bar", "two-words": "x"})
seen["put-head"] = s3.head_object(Bucket=bucket, Key="put")["Metadata"]
seen["put-get"] = s3.get_object(Bucket=bucket, Key="put")["Metadata"]

s3.copy_object(Bucket=bucket, Key="copy", CopySource={"Bucket": bucket, "Key": "put"},
               MetadataDirective="REPLACE", Metadata={"copied": "yes"})
seen["copy-head"] = s3.head_object(Bucket=bucket, Key="copy")["Metadata"]

upload = s3.create_multipart_upload(Bucket=bucket, Key="multi", Metadata={"foo": "multi"})
part = s3.upload_part(Bucket=bucket, Key="multi", UploadId=upload["UploadId"], PartNumber=1, Body=b"part")
s3.complete_multipart_upload(Bucket=bucket, Key="multi", UploadId=upload["UploadId"],
                             MultipartUpload={"Parts": [{"PartNumber": 1, "ETag": part["ETag"]}]})
seen["multipart-head"] = s3.head_object(Bucket=bucket, Key="multi")["Metadata"]

print(json.dumps(seen, sort_keys=True))
