// Package s3err is s3cond's one table of S3 error codes. Every package returns
// *s3err.Error for anything a client should see; the HTTP layer renders it as
// the S3 XML error document. It is public because the public packages
// (sigv4, precondition, proxy) return it: an importer matches it with
// errors.As and reads its Code and HTTP status.
package s3err

import (
	"encoding/xml"
	"errors"
	"fmt"
	"net/http"
	"strconv"
)

// Code is an S3 error code such as "NoSuchKey".
type Code string

// The codes s3cond emits, with the status and default message Amazon S3 uses.
const (
	AccessDenied                      Code = "AccessDenied"
	AuthorizationHeaderMalformed      Code = "AuthorizationHeaderMalformed"
	AuthorizationQueryParametersError Code = "AuthorizationQueryParametersError"
	BadDigest                         Code = "BadDigest"
	BadGateway                        Code = "BadGateway"
	BadRequest                        Code = "BadRequest"
	ConditionalRequestConflict        Code = "ConditionalRequestConflict"
	EntityTooLarge                    Code = "EntityTooLarge"
	EntityTooSmall                    Code = "EntityTooSmall"
	IdempotencyParameterMismatch      Code = "IdempotencyParameterMismatch"
	IncompleteBody                    Code = "IncompleteBody"
	IncorrectNumberOfFilesInPost      Code = "IncorrectNumberOfFilesInPostRequest"
	InvalidChunkSizeError             Code = "InvalidChunkSizeError"
	InternalError                     Code = "InternalError"
	InvalidAccessKeyID                Code = "InvalidAccessKeyId"
	InvalidArgument                   Code = "InvalidArgument"
	InvalidBucketName                 Code = "InvalidBucketName"
	InvalidDigest                     Code = "InvalidDigest"
	InvalidPart                       Code = "InvalidPart"
	InvalidPartOrder                  Code = "InvalidPartOrder"
	InvalidRedirectLocation           Code = "InvalidRedirectLocation"
	InvalidStorageClass               Code = "InvalidStorageClass"
	InvalidTag                        Code = "InvalidTag"
	MetadataTooLarge                  Code = "MetadataTooLarge"
	InvalidPolicyDocument             Code = "InvalidPolicyDocument"
	InvalidRequest                    Code = "InvalidRequest"
	InvalidToken                      Code = "InvalidToken"
	InvalidURI                        Code = "InvalidURI"
	InvalidWriteOffset                Code = "InvalidWriteOffset"
	KeyTooLongError                   Code = "KeyTooLongError"
	MalformedPolicy                   Code = "MalformedPolicy"
	MalformedPOSTRequest              Code = "MalformedPOSTRequest"
	MalformedTrailerError             Code = "MalformedTrailerError"
	MalformedXML                      Code = "MalformedXML"
	MaxMessageLengthExceeded          Code = "MaxMessageLengthExceeded"
	MaxPostPreDataLengthExceeded      Code = "MaxPostPreDataLengthExceededError"
	MethodNotAllowed                  Code = "MethodNotAllowed"
	MissingContentLength              Code = "MissingContentLength"
	MissingSecurityHeader             Code = "MissingSecurityHeader"
	NoSuchBucket                      Code = "NoSuchBucket"
	NoSuchKey                         Code = "NoSuchKey"
	NoSuchUpload                      Code = "NoSuchUpload"
	NotImplemented                    Code = "NotImplemented"
	PreconditionFailed                Code = "PreconditionFailed"
	RequestHeaderSectionTooLarge      Code = "RequestHeaderSectionTooLarge"
	RequestTimeout                    Code = "RequestTimeout"
	RequestTimeTooSkewed              Code = "RequestTimeTooSkewed"
	ServiceUnavailable                Code = "ServiceUnavailable"
	SignatureDoesNotMatch             Code = "SignatureDoesNotMatch"
	SlowDown                          Code = "SlowDown"
	TooManyParts                      Code = "TooManyParts"
	UnexpectedContent                 Code = "UnexpectedContent"
	XAmzContentSHA256Mismatch         Code = "XAmzContentSHA256Mismatch"
)

type entry struct {
	status  int
	message string
}

// table holds S3's status and default message per code: Amazon S3's own
// words, full stops included, as its error responses carry them (the list
// in the S3 API reference, "Error responses"). BadGateway is s3cond's own:
// S3 has no code for a store behind it.
var table = map[Code]entry{
	AccessDenied:                      {http.StatusForbidden, "Access Denied"},
	AuthorizationHeaderMalformed:      {http.StatusBadRequest, "The authorization header you provided is invalid."},
	AuthorizationQueryParametersError: {http.StatusBadRequest, "Error parsing the X-Amz-Credential parameter."},
	BadDigest:                         {http.StatusBadRequest, "The Content-MD5 you specified did not match what we received."},
	BadGateway:                        {http.StatusBadGateway, "The backend storage could not be reached."},
	BadRequest:                        {http.StatusBadRequest, "Bad Request"},
	ConditionalRequestConflict:        {http.StatusConflict, "A conflicting conditional operation is currently in progress against this resource. Please try again."},
	EntityTooLarge:                    {http.StatusBadRequest, "Your proposed upload exceeds the maximum allowed size"},
	EntityTooSmall:                    {http.StatusBadRequest, "Your proposed upload is smaller than the minimum allowed size"},
	IdempotencyParameterMismatch:      {http.StatusBadRequest, "The client token was already used with different parameters."},
	IncompleteBody:                    {http.StatusBadRequest, "The request body terminated unexpectedly"},
	IncorrectNumberOfFilesInPost:      {http.StatusBadRequest, "POST requires exactly one file upload per request."},
	InvalidChunkSizeError:             {http.StatusBadRequest, "Only the last chunk is allowed to have a size less than 8192 bytes"},
	InternalError:                     {http.StatusInternalServerError, "We encountered an internal error. Please try again."},
	InvalidAccessKeyID:                {http.StatusForbidden, "The AWS Access Key Id you provided does not exist in our records."},
	InvalidArgument:                   {http.StatusBadRequest, "Invalid Argument"},
	InvalidBucketName:                 {http.StatusBadRequest, "The specified bucket is not valid."},
	InvalidDigest:                     {http.StatusBadRequest, "The Content-MD5 you specified is not valid."},
	InvalidPart:                       {http.StatusBadRequest, "One or more of the specified parts could not be found. The part might not have been uploaded, or the specified entity tag might not have matched the part's entity tag."},
	InvalidPartOrder:                  {http.StatusBadRequest, "The list of parts was not in ascending order. The parts list must be specified in order by part number."},
	InvalidRedirectLocation:           {http.StatusBadRequest, "The website redirect location must have a prefix of 'http://' or 'https://' or '/'."},
	InvalidStorageClass:               {http.StatusBadRequest, "The storage class you specified is not valid."},
	InvalidTag:                        {http.StatusBadRequest, "The TagValue you have provided is invalid"},
	MetadataTooLarge:                  {http.StatusBadRequest, "Your metadata headers exceed the maximum allowed metadata size."},
	InvalidPolicyDocument:             {http.StatusBadRequest, "The content of the form does not meet the conditions specified in the policy document."},
	InvalidRequest:                    {http.StatusBadRequest, "Invalid Request"},
	InvalidToken:                      {http.StatusBadRequest, "The provided token is malformed or otherwise invalid."},
	InvalidURI:                        {http.StatusBadRequest, "Couldn't parse the specified URI."},
	InvalidWriteOffset:                {http.StatusBadRequest, "The write offset value that you specified does not match the current object size."},
	KeyTooLongError:                   {http.StatusBadRequest, "Your key is too long."},
	MalformedPolicy:                   {http.StatusBadRequest, "Policies must be valid JSON and the first byte must be '{'"},
	MalformedPOSTRequest:              {http.StatusBadRequest, "The body of your POST request is not well-formed multipart/form-data."},
	MaxMessageLengthExceeded:          {http.StatusBadRequest, "Your request was too big."},
	MaxPostPreDataLengthExceeded:      {http.StatusBadRequest, "Your POST request fields preceding the upload file were too large."},
	MalformedTrailerError:             {http.StatusBadRequest, "The request contained trailing data that was not well-formed or did not conform to our published schema."},
	MalformedXML:                      {http.StatusBadRequest, "The XML you provided was not well-formed or did not validate against our published schema."},
	MethodNotAllowed:                  {http.StatusMethodNotAllowed, "The specified method is not allowed against this resource."},
	MissingContentLength:              {http.StatusLengthRequired, "You must provide the Content-Length HTTP header."},
	MissingSecurityHeader:             {http.StatusBadRequest, "Your request was missing a required header."},
	NoSuchBucket:                      {http.StatusNotFound, "The specified bucket does not exist."},
	NoSuchKey:                         {http.StatusNotFound, "The specified key does not exist."},
	NoSuchUpload:                      {http.StatusNotFound, "The specified upload does not exist. The upload ID may be invalid, or the upload may have been aborted or completed."},
	NotImplemented:                    {http.StatusNotImplemented, "A header you provided implies functionality that is not implemented."},
	PreconditionFailed:                {http.StatusPreconditionFailed, "At least one of the pre-conditions you specified did not hold"},
	RequestHeaderSectionTooLarge:      {http.StatusBadRequest, "Your request header section exceeds the maximum allowed size."},
	RequestTimeout:                    {http.StatusBadRequest, "Your socket connection to the server was not read from or written to within the timeout period. Idle connections will be closed."},
	RequestTimeTooSkewed:              {http.StatusForbidden, "The difference between the request time and the current time is too large."},
	ServiceUnavailable:                {http.StatusServiceUnavailable, "Reduce your request rate."},
	SlowDown:                          {http.StatusServiceUnavailable, "Please reduce your request rate."},
	SignatureDoesNotMatch:             {http.StatusForbidden, "The request signature we calculated does not match the signature you provided. Check your key and signing method."},
	TooManyParts:                      {http.StatusBadRequest, "You have attempted to add more parts than the maximum of 10000 that are allowed for this object. You can use the CopyObject operation to copy this object to another and then add more data to the newly copied object."},
	UnexpectedContent:                 {http.StatusBadRequest, "This request does not support content."},
	XAmzContentSHA256Mismatch:         {http.StatusBadRequest, "The provided 'x-amz-content-sha256' header does not match what was computed."},
}

// Error is an S3 error a client sees. Fields beyond Code and Message become
// extra elements of the XML document, as S3 sends them.
type Error struct {
	Code    Code
	Message string
	// Condition names the header that failed, for PreconditionFailed.
	Condition string
	// Extra holds further elements S3 includes (for example ArgumentName,
	// StringToSign), in the order given. Never put a secret here.
	Extra []Field
	// Cause is the underlying error, kept for logs; it is never rendered.
	Cause error
}

// Field is one extra element of an S3 error document.
type Field struct{ Name, Value string }

// New returns the error for code with S3's default message.
func New(code Code) *Error { return &Error{Code: code, Message: table[code].message} }

// Newf returns the error for code with a specific message.
func Newf(code Code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// Wrap returns the error for code with its default message, keeping cause for logs.
func Wrap(code Code, cause error) *Error {
	e := New(code)
	e.Cause = cause
	return e
}

// ContentLengthMismatch is S3's IncompleteBody for a body whose length is
// not the one declared (Content-Length, or x-amz-decoded-content-length for
// an aws-chunked body): S3 words it apart from a body that broke off, and
// names both numbers.
func ContentLengthMismatch(expected, provided int64) *Error {
	return Newf(IncompleteBody, "You did not provide the number of bytes specified by the Content-Length HTTP header").
		With("NumberBytesExpected", strconv.FormatInt(expected, 10)).
		With("NumberBytesProvided", strconv.FormatInt(provided, 10))
}

// Precondition returns the 412 that names the header which did not hold.
func Precondition(header string) *Error {
	e := New(PreconditionFailed)
	e.Condition = header
	return e
}

// With returns a copy of e with an extra element.
func (e *Error) With(name, value string) *Error {
	c := *e
	c.Extra = append(append([]Field(nil), e.Extra...), Field{name, value})
	return &c
}

func (e *Error) Error() string {
	if e.Cause != nil {
		return fmt.Sprintf("%s: %s: %v", e.Code, e.Message, e.Cause)
	}
	return fmt.Sprintf("%s: %s", e.Code, e.Message)
}

func (e *Error) Unwrap() error { return e.Cause }

// Status is the HTTP status S3 answers with for this code (500 if unknown).
func (e *Error) Status() int {
	if t, ok := table[e.Code]; ok {
		return t.status
	}
	return http.StatusInternalServerError
}

// As returns the *Error inside err, or an InternalError wrapping err.
func As(err error) *Error {
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	return Wrap(InternalError, err)
}

// Is reports whether err carries the given S3 code.
func Is(err error, code Code) bool {
	var e *Error
	return errors.As(err, &e) && e.Code == code
}

// Write renders err as S3's XML error document. resource is the request
// path; requestID is s3cond's own request ID. HEAD responses carry no body,
// as S3 sends none.
func Write(w http.ResponseWriter, r *http.Request, err error, requestID string) {
	e := As(err)
	body := e.XML(r.URL.Path, requestID)
	h := w.Header()
	h.Set("Content-Type", "application/xml")
	h.Set("Content-Length", strconv.Itoa(len(body)))
	if e.Code == ServiceUnavailable || e.Code == SlowDown || e.Code == ConditionalRequestConflict {
		h.Set("Retry-After", "1")
	}
	w.WriteHeader(e.Status())
	if r.Method != http.MethodHead {
		_, _ = w.Write(body)
	}
}

// XML returns the error document bytes.
func (e *Error) XML(resource, requestID string) []byte {
	type element struct {
		XMLName xml.Name
		Value   string `xml:",chardata"`
	}
	doc := struct {
		XMLName  xml.Name `xml:"Error"`
		Code     Code     `xml:"Code"`
		Message  string   `xml:"Message"`
		Cond     string   `xml:"Condition,omitempty"`
		Extra    []element
		Resource string `xml:"Resource,omitempty"`
		ReqID    string `xml:"RequestId"`
	}{Code: e.Code, Message: e.Message, Cond: e.Condition, Resource: resource, ReqID: requestID}
	for _, f := range e.Extra {
		doc.Extra = append(doc.Extra, element{XMLName: xml.Name{Local: f.Name}, Value: f.Value})
	}
	out, err := xml.Marshal(doc)
	if err != nil { // cannot happen with these field types; keep the client informed anyway
		out = []byte("<Error><Code>InternalError</Code></Error>")
	}
	return append([]byte(xml.Header), out...)
}
