package proxy

import (
	"net/http"
	"slices"
	"strings"

	"github.com/s3cond/s3cond/internal/operation"
	"github.com/s3cond/s3cond/internal/s3xml"
	"github.com/s3cond/s3cond/s3err"
)

// What a configuration may name, checked against the key's grant:
//
//   - a bucket (a destination, a log target, a policy's resource): one the
//     key may write, on the same backend and known to the store by the same
//     name. s3cond does not rewrite names inside bodies (a re-encoded
//     document is no longer the one the client signed, and a rewrite
//     missed is a write into the wrong bucket), so a granted bucket that
//     backend.buckets maps, or that another backend serves, is 501;
//   - a grantee or principal: the client itself (its client-facing
//     identity or the backend principal it stands for), or everyone (AllUsers,
//     AuthenticatedUsers, Principal "*") on a bucket of anonymous.buckets;
//     S3's log delivery group may be granted. Any other principal is a
//     store identity no s3cond grant covers: 403;
//   - a queue, topic, function, event bus, account or access point: s3cond
//     grants keys buckets, nothing else, so none: 403.

// s3ARNPrefixes are the S3 ARN forms of a bucket, in every partition.
var s3ARNPrefixes = []string{"arn:aws:s3:::", "arn:aws-cn:s3:::", "arn:aws-us-gov:s3:::"}

// checkBucketReference checks one bucket a configuration names, as a name
// or an S3 ARN (arn:aws:s3:::bucket or arn:aws:s3:::bucket/key).
func (p *Proxy) checkBucketReference(c *call, ref string) (string, error) {
	bucket := ref
	if strings.HasPrefix(strings.ToLower(ref), "arn:") {
		rest, ok := cutAnyPrefix(ref, s3ARNPrefixes)
		if !ok {
			return "", denied("The configuration names %q, which is no S3 bucket; s3cond grants keys buckets only.", ref)
		}
		bucket, _, _ = strings.Cut(rest, "/")
	}
	switch {
	case bucket == "" || strings.ContainsAny(bucket, "*?[") || operation.IsReservedBucket(bucket):
		return "", denied("The configuration names the bucket %q, which this key cannot be granted.", bucket)
	case !p.access.Allowed(c.auth.AccessKeyID, bucket, true):
		return "", denied("The configuration names the bucket %q, which this key may not write.", bucket)
	case p.backendFor(bucket) != c.backend || c.backend.BackendBucket(bucket) != bucket:
		return "", s3err.Newf(s3err.NotImplemented,
			"The configuration names the bucket %q, which the store knows by another name or which another backend serves; s3cond does not rewrite names inside configuration bodies.", bucket)
	}
	return bucket, nil
}

func cutAnyPrefix(s string, prefixes []string) (string, bool) {
	for _, prefix := range prefixes {
		if len(s) >= len(prefix) && strings.EqualFold(s[:len(prefix)], prefix) {
			return s[len(prefix):], true
		}
	}
	return "", false
}

func denied(format string, args ...any) *s3err.Error {
	return s3err.Newf(s3err.AccessDenied, format, args...)
}

// checkFound checks what ReadConfiguration found in an XML configuration.
func (p *Proxy) checkFound(c *call, rule configRule, found s3xml.Configuration) error {
	if len(found.Foreign) > 0 {
		return denied("The configuration names a %s, which no s3cond key can be granted.", found.Foreign[0])
	}
	var buckets []string
	for _, ref := range found.Buckets {
		bucket, err := p.checkBucketReference(c, ref.Value)
		if err != nil {
			return err
		}
		buckets = append(buckets, bucket)
	}
	for _, g := range found.Grantees {
		if err := p.checkGrantee(c, buckets, g.Kind, g.Value); err != nil {
			return err
		}
	}
	if rule.publicAccessBlock && relaxesPublicAccessBlock(found.Flags) {
		return p.requirePublic(c, nil, "A public access block with a switch off")
	}
	return nil
}

// relaxesPublicAccessBlock reports whether a block leaves any of its four
// switches off: S3 reads a missing switch as false.
func relaxesPublicAccessBlock(flags map[string][]string) bool {
	for _, name := range publicAccessBlockFlags {
		values := flags[name]
		if len(values) != 1 || !strings.EqualFold(values[0], "true") {
			return true
		}
	}
	return false
}

// S3's predefined groups, by the last part of their URI.
const (
	allUsersGroup           = "/groups/global/allusers"
	authenticatedUsersGroup = "/groups/global/authenticatedusers"
	logDeliveryGroup        = "/groups/s3/logdelivery"
)

// checkGrantee checks one grantee of an ACL (body or header). buckets are
// the other buckets the document names (a log target), which a public
// grant opens too.
func (p *Proxy) checkGrantee(c *call, buckets []string, kind, value string) error {
	switch kind {
	case "ID":
		if value == clientIdentity(c) || slices.Contains(c.backend.Identity, value) {
			return nil
		}
		return denied("The ACL grants the principal %q, which is not this key; s3cond grants store principals nothing.", value)
	case "URI":
		uri := strings.ToLower(value)
		switch {
		case strings.HasSuffix(uri, allUsersGroup), strings.HasSuffix(uri, authenticatedUsersGroup):
			return p.requirePublic(c, buckets, "An ACL granting "+value)
		case strings.HasSuffix(uri, logDeliveryGroup):
			return nil
		}
		return denied("The ACL grants the group %q, which s3cond does not know.", value)
	}
	return denied("The ACL grants %s %q, a principal s3cond grants nothing.", kind, value)
}

// requirePublic refuses what makes a bucket public (with extra, the
// buckets a configuration names) unless anonymous.buckets has it.
func (p *Proxy) requirePublic(c *call, extra []string, what string) error {
	for _, bucket := range append([]string{c.target.Bucket}, extra...) {
		if !p.anonymousRead(bucket) {
			return denied("%s makes the bucket %q public, and it is not in anonymous.buckets.", what, bucket)
		}
	}
	return nil
}

// publicCannedACLs open a bucket or object to everyone; aws-exec-read
// grants Amazon EC2, a principal no s3cond grant covers.
var publicCannedACLs = map[string]bool{"public-read": true, "public-read-write": true, "authenticated-read": true}

// checkACLHeaders checks a canned ACL (x-amz-acl) and the grantees of the
// x-amz-grant-* headers, on any call that carries them (PutObject,
// CopyObject, CreateMultipartUpload, CreateBucket, Put*Acl, a POST form).
func (p *Proxy) checkACLHeaders(c *call, h http.Header) error {
	for _, canned := range h.Values("X-Amz-Acl") {
		switch lower := strings.ToLower(strings.TrimSpace(canned)); {
		case publicCannedACLs[lower]:
			if err := p.requirePublic(c, nil, "The canned ACL "+canned); err != nil {
				return err
			}
		case lower == "aws-exec-read":
			return denied("The canned ACL %s grants Amazon EC2, a principal s3cond grants nothing.", canned)
		}
	}
	for name, values := range h {
		// Case-blind: a query parameter's name need not canonicalise.
		if !strings.HasPrefix(strings.ToLower(name), "x-amz-grant-") {
			continue
		}
		for _, list := range values {
			for _, entry := range strings.Split(list, ",") {
				kind, value := grantHeaderEntry(entry)
				if err := p.checkGrantee(c, nil, kind, value); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// grantHeaderEntry reads one grantee of a grant header: id="...",
// uri="..." or emailAddress="..."; a bare value is an ID, as versitygw
// reads it.
func grantHeaderEntry(entry string) (kind, value string) {
	key, value, ok := strings.Cut(strings.TrimSpace(entry), "=")
	if !ok {
		return "ID", strings.TrimSpace(entry)
	}
	value = strings.Trim(strings.TrimSpace(value), `"`)
	switch strings.ToLower(strings.TrimSpace(key)) {
	case "id":
		return "ID", value
	case "uri":
		return "URI", value
	case "emailaddress":
		return "EmailAddress", value
	}
	return strings.TrimSpace(key), value
}

// publicReadActions are what a public policy statement may allow: the
// reads of an anonymous grant (GetObject, ListObjects).
var publicReadActions = []string{"s3:GetObject", "s3:ListBucket"}

// checkPolicy checks a bucket policy: each resource a bucket of the grant;
// each Allow statement public (or naming no principal), on buckets of
// anonymous.buckets, allowing reads only. Deny statements may name anyone:
// they only take away.
func (p *Proxy) checkPolicy(c *call, policy s3xml.Policy) error {
	for _, st := range policy.Statements {
		var buckets []string
		for _, resource := range st.Resources {
			bucket, err := p.checkBucketReference(c, resource)
			if err != nil {
				return err
			}
			buckets = append(buckets, bucket)
		}
		if strings.EqualFold(st.Effect, "Deny") {
			continue
		}
		switch {
		case st.NotResource:
			return denied("A policy statement that allows NotResource reaches beyond this key's buckets.")
		case st.NotPrincipal:
			return denied("A policy statement that allows NotPrincipal allows principals s3cond grants nothing.")
		case st.NotAction:
			return denied("A policy statement that allows NotAction allows more than anonymous.buckets does.")
		}
		for _, principal := range st.Principals {
			if !isPublicPrincipal(principal) {
				return denied("The policy allows the principal %q, which s3cond grants nothing; only Principal \"*\" on a bucket of anonymous.buckets may be allowed.", principal)
			}
		}
		// An Allow that names no principal is read as public: a lenient
		// store may take it for everyone.
		if err := p.requirePublic(c, buckets, "A policy allowing Principal \"*\""); err != nil {
			return err
		}
		for _, action := range st.Actions {
			if !slices.ContainsFunc(publicReadActions, func(a string) bool { return strings.EqualFold(a, action) }) {
				return denied("A public policy may allow only %v (what anonymous.buckets allows), not %q.", publicReadActions, action)
			}
		}
	}
	return nil
}

// isPublicPrincipal reports whether a flattened principal is everyone.
func isPublicPrincipal(principal string) bool {
	return principal == "*" || strings.EqualFold(principal, "AWS:*")
}
