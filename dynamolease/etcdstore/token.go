package etcdstore

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"

	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"
	"google.golang.org/grpc"
)

// etcd's simple auth tokens (3.4's default) expire after --auth-token-ttl
// seconds unused (300 by default). clientv3 then authenticates again, but
// sends that Authenticate with the expired token, which etcd 3.4 refuses
// as "invalid auth token" too: the client retries it within itself until
// the call's deadline, and every conditional write answers 503 until
// s3cond restarts. So s3cond keeps the token itself: Authenticate goes
// without one, and a request refused for its token is sent once more
// after a fresh Authenticate.

// etcdTokenAuth is the gRPC per-request credential carrying the token.
type etcdTokenAuth struct {
	username, password string
	client             *clientv3.Client // set once the client is made

	mu    sync.Mutex
	token string
}

const etcdAuthService = "etcdserverpb.Auth"

// GetRequestMetadata implements credentials.PerRPCCredentials. uri names
// the service called: the Auth service is called without a token.
func (a *etcdTokenAuth) GetRequestMetadata(_ context.Context, uri ...string) (map[string]string, error) {
	for _, u := range uri {
		if strings.HasSuffix(u, etcdAuthService) {
			return nil, nil
		}
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.token == "" {
		return nil, nil
	}
	return map[string]string{rpctypes.TokenFieldNameGRPC: a.token}, nil
}

// RequireTransportSecurity implements credentials.PerRPCCredentials: the
// token goes over plain HTTP when the endpoints are http://, as clientv3's
// own does.
func (a *etcdTokenAuth) RequireTransportSecurity() bool { return false }

// authenticate fetches a fresh token.
func (a *etcdTokenAuth) authenticate(ctx context.Context) error {
	resp, err := a.client.Authenticate(ctx, a.username, a.password)
	if err != nil {
		return fmt.Errorf("authenticate to etcd as %q: %w", a.username, err)
	}
	a.mu.Lock()
	a.token = resp.Token
	a.mu.Unlock()
	return nil
}

// interceptor sends a request refused for an invalid or expired token once
// more, after authenticating again.
func (a *etcdTokenAuth) interceptor(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn,
	invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
	err := invoker(ctx, method, req, reply, cc, opts...)
	if err == nil || strings.Contains(method, etcdAuthService+"/") || !isInvalidToken(err) {
		return err
	}
	if authErr := a.authenticate(ctx); authErr != nil {
		return errors.Join(err, authErr)
	}
	return invoker(ctx, method, req, reply, cc, opts...)
}

func isInvalidToken(err error) bool {
	e := rpctypes.Error(err)
	return errors.Is(e, rpctypes.ErrInvalidAuthToken) || errors.Is(e, rpctypes.ErrUserEmpty) ||
		errors.Is(e, rpctypes.ErrAuthOldRevision)
}
