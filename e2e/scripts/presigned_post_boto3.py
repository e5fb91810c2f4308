"""Creates the fields of a browser upload form with boto3's
generate_presigned_post, exactly as a web application's backend hands them
to a page, and prints {"url": ..., "fields": {...}} as JSON.

The policy allows keys under PREFIX (the form's key is PREFIX${filename}),
files of at most MAX_SIZE bytes, a Content-Type starting with "text/", the
user metadata x-amz-meta-owner=ann, and success_action_status 201.

With a fifth argument, the script also uploads that file the way a Python
web client does, with requests (the fields, a Content-Type of text/plain,
then the file), and prints {"status": ..., "body": ...} instead.

Usage: python3 presigned_post_boto3.py ENDPOINT BUCKET PREFIX MAX_SIZE [FILE]
Credentials come from AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY.
"""
import json
import sys

import boto3
from botocore.config import Config

endpoint, bucket, prefix, max_size = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
s3 = boto3.client(
    "s3",
    endpoint_url=endpoint,
    region_name="us-east-1",
    config=Config(s3={"addressing_style": "path"}, signature_version="s3v4"),
)
post = s3.generate_presigned_post(
    Bucket=bucket,
    Key=prefix + "${filename}",
    Fields={"x-amz-meta-owner": "ann", "success_action_status": "201"},
    Conditions=[
        {"x-amz-meta-owner": "ann"},
        {"success_action_status": "201"},
        ["starts-with", "$Content-Type", "text/"],
        ["content-length-range", 1, max_size],
    ],
    ExpiresIn=600,
)
if len(sys.argv) < 6:
    print(json.dumps(post, sort_keys=True))
    sys.exit(0)

import os  # noqa: E402  (only the upload mode needs these)
import requests  # noqa: E402

path = sys.argv[5]
fields = dict(post["fields"], **{"Content-Type": "text/plain"})
with open(path, "rb") as f:
    resp = requests.post(post["url"], data=fields, files={"file": (os.path.basename(path), f)}, timeout=60)
print(json.dumps({"status": resp.status_code, "body": resp.text}))
