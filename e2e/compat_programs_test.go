package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/s3cond/s3cond/internal/testservers"
)

// compatCommandTimeout bounds one client command; the slowest is a 16 MiB
// multipart upload, which takes a few seconds.
const compatCommandTimeout = 2 * time.Minute

// runCompatProgram runs a client program with the key under test, nothing of
// the user's AWS configuration, and extraEnv (which wins over the rest).
func runCompatProgram(t *testing.T, e *Env, dir string, extraEnv []string, name string, args ...string) (string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), compatCommandTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, clientProgram(t, name), args...)
	cmd.Env = append(clientEnv(e.RW), extraEnv...)
	cmd.Dir = dir
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return stdout.String(), &programError{command: name + " " + strings.Join(args, " "), err: err,
			stdout: stdout.String(), stderr: stderr.String()}
	}
	return stdout.String(), nil
}

// programError is a client program that exited with an error.
type programError struct {
	command        string
	err            error
	stdout, stderr string
}

func (e *programError) Error() string {
	return fmt.Sprintf("%s: %v\nstdout: %s\nstderr: %s", e.command, e.err, e.stdout, e.stderr)
}

// firstLine is the first non-empty line of a tool's version output.
func firstLine(s string) string {
	for line := range strings.SplitSeq(s, "\n") {
		if line = strings.TrimSpace(line); line != "" {
			return line
		}
	}
	return ""
}

// awsCLICompat is the first `aws` on PATH: s3api for single requests and the
// conditional options, `aws s3 cp` for its multipart transfer.
type awsCLICompat struct {
	e   *Env
	dir string
}

func newAWSCLICompat(t *testing.T, e *Env) compatClient {
	testservers.Require(t, "aws")
	dir := t.TempDir()
	// The CLI reads its transfer settings only from the config file.
	writeFile(t, filepath.Join(dir, "config"), "[default]\ns3 =\n  multipart_threshold = 5MB\n  multipart_chunksize = 5MB\n")
	return awsCLICompat{e: e, dir: dir}
}

var awsCLIErrorCode = regexp.MustCompile(`An error occurred \(([A-Za-z0-9.]+)\)`)

func (a awsCLICompat) run(t *testing.T, args ...string) (string, error) {
	t.Helper()
	stdout, err := runCompatProgram(t, a.e, a.dir, []string{"AWS_CONFIG_FILE=" + filepath.Join(a.dir, "config")},
		"aws", append([]string{"--endpoint-url", a.e.Endpoint}, args...)...)
	var failed *programError
	if errors.As(err, &failed) {
		if m := awsCLIErrorCode.FindStringSubmatch(failed.stderr); m != nil {
			return stdout, &clientS3Error{Code: m[1], Detail: strings.TrimSpace(failed.stderr)}
		}
	}
	return stdout, err
}

func (a awsCLICompat) Version(t *testing.T) (string, error) {
	out, err := runCompatProgram(t, a.e, a.dir, nil, "aws", "--version")
	if err != nil {
		return "", err
	}
	// "aws-cli/1.45.11 Python/3.11.7 Linux/… botocore/1.43.11": the CLI's own part.
	return strings.Fields(out + " ")[0], nil
}

func (a awsCLICompat) Put(t *testing.T, bucket, key, file string, cond putCondition) error {
	args := []string{"s3api", "put-object", "--bucket", bucket, "--key", key, "--body", file}
	if cond.IfMatch != "" {
		args = append(args, "--if-match", cond.IfMatch)
	}
	if cond.IfNoneMatch != "" {
		args = append(args, "--if-none-match", cond.IfNoneMatch)
	}
	_, err := a.run(t, args...)
	return err
}

func (a awsCLICompat) Get(t *testing.T, bucket, key, outFile string) error {
	_, err := a.run(t, "s3api", "get-object", "--bucket", bucket, "--key", key, outFile)
	return err
}

func (a awsCLICompat) List(t *testing.T, bucket, prefix string) ([]string, error) {
	out, err := a.run(t, "s3api", "list-objects-v2", "--bucket", bucket, "--prefix", prefix, "--output", "json")
	if err != nil {
		return nil, err
	}
	var listing struct{ Contents []struct{ Key string } }
	if strings.TrimSpace(out) != "" {
		if err := json.Unmarshal([]byte(out), &listing); err != nil {
			return nil, fmt.Errorf("parse list-objects-v2 output %q: %w", out, err)
		}
	}
	keys := make([]string, 0, len(listing.Contents))
	for _, c := range listing.Contents {
		keys = append(keys, c.Key)
	}
	return keys, nil
}

// Multipart: partSize is fixed by the config file written at start.
func (a awsCLICompat) Multipart(t *testing.T, bucket, key, file string, _ int64) error {
	_, err := a.run(t, "s3", "cp", "--only-show-errors", file, "s3://"+bucket+"/"+key)
	return err
}

func (a awsCLICompat) Copy(t *testing.T, bucket, sourceKey, destKey string) error {
	_, err := a.run(t, "s3api", "copy-object", "--bucket", bucket, "--key", destKey, "--copy-source", bucket+"/"+sourceKey)
	return err
}

func (a awsCLICompat) Delete(t *testing.T, bucket, key, ifMatch string) error {
	args := []string{"s3api", "delete-object", "--bucket", bucket, "--key", key}
	if ifMatch != "" {
		args = append(args, "--if-match", ifMatch)
	}
	_, err := a.run(t, args...)
	return err
}

// scriptCompat drives a client through a script that makes one request per
// run and prints one JSON line (e2e/scripts/compat_boto3.py,
// e2e/node/compat.mjs).
type scriptCompat struct {
	e       *Env
	program string // python3 or node
	script  string // absolute path
	dir     string // working directory (node resolves its modules from here)
}

func newBoto3Compat(t *testing.T, e *Env) compatClient {
	testservers.Require(t, "boto3")
	script, err := filepath.Abs(filepath.Join("scripts", "compat_boto3.py"))
	if err != nil {
		t.Fatal(err)
	}
	return scriptCompat{e: e, program: "python3", script: script, dir: t.TempDir()}
}

func newNodeCompat(t *testing.T, e *Env) compatClient {
	testservers.Require(t, "node_modules")
	dir, err := filepath.Abs("node")
	if err != nil {
		t.Fatal(err)
	}
	return scriptCompat{e: e, program: "node", script: filepath.Join(dir, "compat.mjs"), dir: dir}
}

// scriptResult is the JSON line a compat script prints.
type scriptResult struct {
	OK      bool     `json:"ok"`
	Status  int      `json:"status"`
	Code    string   `json:"code"`
	Message string   `json:"message"`
	Version string   `json:"version"`
	Keys    []string `json:"keys"`
}

func (s scriptCompat) run(t *testing.T, op string, args ...string) (scriptResult, error) {
	t.Helper()
	out, err := runCompatProgram(t, s.e, s.dir, nil, s.program, append([]string{s.script, s.e.Endpoint, op}, args...)...)
	if err != nil {
		return scriptResult{}, err
	}
	var result scriptResult
	if err := json.Unmarshal([]byte(strings.TrimSpace(out)), &result); err != nil {
		return scriptResult{}, fmt.Errorf("%s %s: parse output %q: %w", s.program, op, out, err)
	}
	if !result.OK {
		return result, &clientS3Error{Status: result.Status, Code: result.Code, Detail: result.Message}
	}
	return result, nil
}

func (s scriptCompat) Version(t *testing.T) (string, error) {
	r, err := s.run(t, "version")
	return r.Version, err
}

func (s scriptCompat) Put(t *testing.T, bucket, key, file string, cond putCondition) error {
	_, err := s.run(t, "put", bucket, key, file, cond.IfMatch, cond.IfNoneMatch)
	return err
}

func (s scriptCompat) Get(t *testing.T, bucket, key, outFile string) error {
	_, err := s.run(t, "get", bucket, key, outFile)
	return err
}

func (s scriptCompat) List(t *testing.T, bucket, prefix string) ([]string, error) {
	r, err := s.run(t, "list", bucket, prefix)
	return r.Keys, err
}

func (s scriptCompat) Multipart(t *testing.T, bucket, key, file string, partSize int64) error {
	_, err := s.run(t, "multipart", bucket, key, file, strconv.FormatInt(partSize, 10))
	return err
}

func (s scriptCompat) Copy(t *testing.T, bucket, sourceKey, destKey string) error {
	_, err := s.run(t, "copy", bucket, sourceKey, destKey)
	return err
}

func (s scriptCompat) Delete(t *testing.T, bucket, key, ifMatch string) error {
	_, err := s.run(t, "delete", bucket, key, ifMatch)
	return err
}

// rcloneCompat is Debian's rclone with an s3 remote named "s3cond" defined
// in environment variables (and an empty config file, so a user's own
// remotes play no part). It has no conditional writes.
type rcloneCompat struct {
	e   *Env
	dir string
}

const rcloneRemote = "s3cond"

func newRcloneCompat(t *testing.T, e *Env) compatClient {
	testservers.Require(t, "rclone")
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "rclone.conf"), "")
	return rcloneCompat{e: e, dir: dir}
}

func (r rcloneCompat) run(t *testing.T, args ...string) (string, error) {
	t.Helper()
	prefix := "RCLONE_CONFIG_" + strings.ToUpper(rcloneRemote) + "_"
	env := []string{
		prefix + "TYPE=s3", prefix + "PROVIDER=Other", prefix + "ENV_AUTH=false",
		prefix + "ACCESS_KEY_ID=" + r.e.RW.AccessKey, prefix + "SECRET_ACCESS_KEY=" + r.e.RW.Secret,
		prefix + "ENDPOINT=" + r.e.Endpoint, prefix + "REGION=" + Region, prefix + "FORCE_PATH_STYLE=true",
	}
	common := []string{"--config", filepath.Join(r.dir, "rclone.conf"), "--s3-no-check-bucket",
		"--retries", "1", "--low-level-retries", "1"}
	return runCompatProgram(t, r.e, r.dir, env, "rclone", append(common, args...)...)
}

func (r rcloneCompat) path(bucket, key string) string { return rcloneRemote + ":" + bucket + "/" + key }

func (r rcloneCompat) Version(t *testing.T) (string, error) {
	out, err := r.run(t, "version")
	return firstLine(out), err
}

func (r rcloneCompat) Put(t *testing.T, bucket, key, file string, cond putCondition) error {
	if cond != (putCondition{}) {
		return errNoConditional
	}
	_, err := r.run(t, "copyto", file, r.path(bucket, key))
	return err
}

func (r rcloneCompat) Get(t *testing.T, bucket, key, outFile string) error {
	_, err := r.run(t, "copyto", r.path(bucket, key), outFile)
	return err
}

// List: rclone lists a "directory", so the prefix must end in "/"; it prints
// keys relative to it.
func (r rcloneCompat) List(t *testing.T, bucket, prefix string) ([]string, error) {
	out, err := r.run(t, "lsf", "-R", "--files-only", r.path(bucket, prefix))
	if err != nil {
		return nil, err
	}
	var keys []string
	for line := range strings.SplitSeq(out, "\n") {
		if line = strings.TrimSpace(line); line != "" {
			keys = append(keys, prefix+line)
		}
	}
	return keys, nil
}

func (r rcloneCompat) Multipart(t *testing.T, bucket, key, file string, partSize int64) error {
	size := strconv.FormatInt(partSize>>20, 10) + "M"
	_, err := r.run(t, "copyto", "--s3-upload-cutoff", size, "--s3-chunk-size", size, file, r.path(bucket, key))
	return err
}

func (r rcloneCompat) Copy(t *testing.T, bucket, sourceKey, destKey string) error {
	_, err := r.run(t, "copyto", r.path(bucket, sourceKey), r.path(bucket, destKey))
	return err
}

func (r rcloneCompat) Delete(t *testing.T, bucket, key, ifMatch string) error {
	if ifMatch != "" {
		return errNoConditional
	}
	_, err := r.run(t, "deletefile", r.path(bucket, key))
	return err
}

// s3cmdCompat is Debian's s3cmd with a temporary config file (keys only) and
// the endpoint on the command line: path-style, plain HTTP, SigV4. It has no
// conditional writes.
type s3cmdCompat struct {
	e    *Env
	dir  string
	host string
}

func newS3cmdCompat(t *testing.T, e *Env) compatClient {
	testservers.Require(t, "s3cmd")
	u, err := url.Parse(e.Endpoint)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "s3cfg"), fmt.Sprintf(
		"[default]\naccess_key = %s\nsecret_key = %s\nbucket_location = %s\nsignature_v2 = False\nmax_retries = 1\nprogress_meter = False\n",
		e.RW.AccessKey, e.RW.Secret, Region))
	return s3cmdCompat{e: e, dir: dir, host: u.Host}
}

func (s s3cmdCompat) run(t *testing.T, args ...string) (string, error) {
	t.Helper()
	// Without a bucket placeholder in --host-bucket, s3cmd addresses buckets
	// by path.
	common := []string{"--config", filepath.Join(s.dir, "s3cfg"), "--host", s.host, "--host-bucket", s.host,
		"--no-ssl", "--region", Region}
	return runCompatProgram(t, s.e, s.dir, nil, "s3cmd", append(common, args...)...)
}

func (s s3cmdCompat) Version(t *testing.T) (string, error) {
	out, err := runCompatProgram(t, s.e, s.dir, nil, "s3cmd", "--version")
	return firstLine(out), err
}

func (s s3cmdCompat) Put(t *testing.T, bucket, key, file string, cond putCondition) error {
	if cond != (putCondition{}) {
		return errNoConditional
	}
	_, err := s.run(t, "put", file, "s3://"+bucket+"/"+key)
	return err
}

func (s s3cmdCompat) Get(t *testing.T, bucket, key, outFile string) error {
	_, err := s.run(t, "get", "--force", "s3://"+bucket+"/"+key, outFile)
	return err
}

// List parses `s3cmd ls --recursive` lines: date, time, size, s3://bucket/key.
func (s s3cmdCompat) List(t *testing.T, bucket, prefix string) ([]string, error) {
	out, err := s.run(t, "ls", "--recursive", "s3://"+bucket+"/"+prefix)
	if err != nil {
		return nil, err
	}
	var keys []string
	for line := range strings.SplitSeq(out, "\n") {
		if _, key, ok := strings.Cut(line, " s3://"+bucket+"/"); ok {
			keys = append(keys, key)
		}
	}
	return keys, nil
}

func (s s3cmdCompat) Multipart(t *testing.T, bucket, key, file string, partSize int64) error {
	_, err := s.run(t, "put", "--multipart-chunk-size-mb="+strconv.FormatInt(partSize>>20, 10), file, "s3://"+bucket+"/"+key)
	return err
}

func (s s3cmdCompat) Copy(t *testing.T, bucket, sourceKey, destKey string) error {
	_, err := s.run(t, "cp", "s3://"+bucket+"/"+sourceKey, "s3://"+bucket+"/"+destKey)
	return err
}

func (s s3cmdCompat) Delete(t *testing.T, bucket, key, ifMatch string) error {
	if ifMatch != "" {
		return errNoConditional
	}
	_, err := s.run(t, "del", "s3://"+bucket+"/"+key)
	return err
}
