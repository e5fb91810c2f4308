"""boto3 signing with AWS Signature Version 2 (signature_version='s3'):
PutObject, GetObject, and a conditional create twice. Prints one JSON line
with each call's HTTP status (and error code), for e2e/sigv2_test.go.

usage: sigv2_boto3.py ENDPOINT BUCKET KEY
"""
import json
import sys

import boto3
from botocore.config import Config
from botocore.exceptions import ClientError


def status(call):
    try:
        resp = call()
        return {"status": resp["ResponseMetadata"]["HTTPStatusCode"], "body": resp["Body"].read().decode() if "Body" in resp else ""}
    except ClientError as err:
        return {"status": err.response["ResponseMetadata"]["HTTPStatusCode"], "code": err.response["Error"]["Code"]}


def main():
    endpoint, bucket, key = sys.argv[1:4]
    s3 = boto3.client("s3", endpoint_url=endpoint,
                      config=Config(signature_version="s3", s3={"addressing_style": "path"},
                                    retries={"max_attempts": 1}))
    out = {
        "put": status(lambda: s3.put_object(Bucket=bucket, Key=key, Body=b"signed with sigv2")),
        "get": status(lambda: s3.get_object(Bucket=bucket, Key=key)),
        "create": status(lambda: s3.put_object(Bucket=bucket, Key=key + ".new", Body=b"first", IfNoneMatch="*")),
        "create_again": status(lambda: s3.put_object(Bucket=bucket, Key=key + ".new", Body=b"second", IfNoneMatch="*")),
        "get_created": status(lambda: s3.get_object(Bucket=bucket, Key=key + ".new")),
    }
    print(json.dumps(out))


main()
