"""One S3 operation with boto3, for the client compatibility matrix
(e2e/compat_test.go). Prints one JSON line: {"ok": true, ...} on success, or
{"ok": false, "status": N, "code": "..."} when the server answered with an S3
error. Anything else (a broken client, a bad argument) raises and exits
non-zero, so the test tells "S3 said no" apart from "the client broke".

Usage: python3 compat_boto3.py ENDPOINT OP ARGS...
  version
  put BUCKET KEY FILE IF_MATCH IF_NONE_MATCH   (empty string: header not sent)
  get BUCKET KEY OUT_FILE
  list BUCKET PREFIX
  multipart BUCKET KEY FILE PART_SIZE_BYTES    (boto3's managed upload_file)
  copy BUCKET SOURCE_KEY DEST_KEY
  delete BUCKET KEY IF_MATCH
  delete-quiet BUCKET KEY...                   (DeleteObjects, Quiet and BypassGovernanceRetention)
  create-bucket BUCKET OBJECT_LOCK             (OBJECT_LOCK "true": ObjectLockEnabledForBucket=True)
Old botocores (before 1.31, e.g. Debian bookworm's 1.29) send boolean headers
as Python writes them ("True"), newer ones as "true": the last two operations
send one each.
Credentials come from AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY.
"""
import json
import sys

import boto3
import botocore
from boto3.s3.transfer import TransferConfig
from botocore.config import Config
from botocore.exceptions import ClientError


def client(endpoint):
    return boto3.client(
        "s3",
        endpoint_url=endpoint,
        region_name="us-east-1",
        config=Config(s3={"addressing_style": "path"}, retries={"max_attempts": 1}),
    )


def conditions(if_match, if_none_match):
    extra = {}
    if if_match:
        extra["IfMatch"] = if_match
    if if_none_match:
        extra["IfNoneMatch"] = if_none_match
    return extra


def run(endpoint, op, args):
    if op == "version":
        return {"version": f"boto3 {boto3.__version__} (botocore {botocore.__version__})"}
    s3 = client(endpoint)
    if op == "put":
        bucket, key, path, if_match, if_none_match = args
        with open(path, "rb") as body:
            out = s3.put_object(Bucket=bucket, Key=key, Body=body, **conditions(if_match, if_none_match))
        return {"etag": out["ETag"]}
    if op == "get":
        bucket, key, path = args
        body = s3.get_object(Bucket=bucket, Key=key)["Body"]
        with open(path, "wb") as out:
            for chunk in body.iter_chunks(1024 * 1024):
                out.write(chunk)
        return {}
    if op == "list":
        bucket, prefix = args
        keys = []
        for page in s3.get_paginator("list_objects_v2").paginate(Bucket=bucket, Prefix=prefix):
            keys.extend(item["Key"] for item in page.get("Contents", []))
        return {"keys": keys}
    if op == "multipart":
        bucket, key, path, part_size = args
        size = int(part_size)
        s3.upload_file(path, bucket, key, Config=TransferConfig(multipart_threshold=size, multipart_chunksize=size))
        return {}
    if op == "copy":
        bucket, source, dest = args
        out = s3.copy_object(Bucket=bucket, Key=dest, CopySource={"Bucket": bucket, "Key": source})
        return {"etag": out["CopyObjectResult"]["ETag"]}
    if op == "delete":
        bucket, key, if_match = args
        s3.delete_object(Bucket=bucket, Key=key, **conditions(if_match, ""))
        return {}
    if op == "delete-quiet":
        bucket, keys = args[0], args[1:]
        out = s3.delete_objects(Bucket=bucket, BypassGovernanceRetention=True,
                                Delete={"Objects": [{"Key": k} for k in keys], "Quiet": True})
        return {"keys": [e["Key"] for e in out.get("Errors", [])]}
    if op == "create-bucket":
        bucket, lock = args
        s3.create_bucket(Bucket=bucket, ObjectLockEnabledForBucket=(lock == "true"))
        return {}
    raise SystemExit(f"unknown operation {op!r}")


def main():
    endpoint, op, args = sys.argv[1], sys.argv[2], sys.argv[3:]
    try:
        result = run(endpoint, op, args)
    except ClientError as err:
        print(json.dumps({
            "ok": False,
            "status": err.response.get("ResponseMetadata", {}).get("HTTPStatusCode", 0),
            "code": err.response.get("Error", {}).get("Code", ""),
            "message": str(err),
        }))
        return
    print(json.dumps({"ok": True, **result}))


if __name__ == "__main__":
    main()
