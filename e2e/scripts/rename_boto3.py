"""RenameObject with boto3's rename_object (boto3 >= 1.40), printing what
each call answered, as JSON: {"rename": "ok", "source-after": 404, ...}.

Usage: python3 rename_boto3.py ENDPOINT BUCKET
Credentials come from AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY.
"""
import json
import sys

import boto3
from botocore.config import Config
from botocore.exceptions import ClientError

endpoint, bucket = sys.argv[1:3]
s3 = boto3.client(
    "s3",
    endpoint_url=endpoint,
    region_name="us-east-1",
    config=Config(s3={"addressing_style": "path"}, retries={"max_attempts": 1}),
)


def outcome(call):
    try:
        call()
        return "ok"
    except ClientError as e:
        return "%d %s" % (e.response["ResponseMetadata"]["HTTPStatusCode"], e.response["Error"]["Code"])


seen = {}
s3.put_object(Bucket=bucket, Key="b3/src", Body=b"boto3 body", Metadata={"kept": "yes"})
# boto3 fills ClientToken itself (an idempotency token): a plain call sends one.
seen["rename"] = outcome(lambda: s3.rename_object(Bucket=bucket, Key="b3/dst", RenameSource=bucket + "/b3/src"))
seen["source-after"] = outcome(lambda: s3.head_object(Bucket=bucket, Key="b3/src"))
seen["destination-body"] = s3.get_object(Bucket=bucket, Key="b3/dst")["Body"].read().decode()
seen["destination-metadata"] = s3.head_object(Bucket=bucket, Key="b3/dst")["Metadata"]
seen["missing-source"] = outcome(lambda: s3.rename_object(Bucket=bucket, Key="b3/x", RenameSource=bucket + "/b3/src"))
s3.put_object(Bucket=bucket, Key="b3/src", Body=b"second")
seen["destination-exists"] = outcome(lambda: s3.rename_object(
    Bucket=bucket, Key="b3/dst", RenameSource=bucket + "/b3/src", DestinationIfNoneMatch="*"))
seen["replay"] = outcome(lambda: s3.rename_object(
    Bucket=bucket, Key="b3/dst2", RenameSource=bucket + "/b3/src", ClientToken="boto3-token-1"))
s3.put_object(Bucket=bucket, Key="b3/src", Body=b"third")
seen["replay-again"] = outcome(lambda: s3.rename_object(
    Bucket=bucket, Key="b3/dst2", RenameSource=bucket + "/b3/src", ClientToken="boto3-token-1"))
seen["source-after-replay"] = s3.get_object(Bucket=bucket, Key="b3/src")["Body"].read().decode()
seen["mismatch"] = outcome(lambda: s3.rename_object(
    Bucket=bucket, Key="b3/dst3", RenameSource=bucket + "/b3/src", ClientToken="boto3-token-1"))
print(json.dumps(seen, sort_keys=True))
