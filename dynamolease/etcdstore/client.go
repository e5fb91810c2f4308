package etcdstore

import (
	"context"
	"crypto/tls"
	"fmt"
	"time"

	"go.etcd.io/etcd/client/pkg/v3/transport"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
	"google.golang.org/grpc"
)

// ClientOptions say how to reach the etcd cluster that holds the lease
// table.
type ClientOptions struct {
	// Endpoints are the members' client URLs (http://host:2379, https://...).
	Endpoints []string
	// Username and Password, when set, authenticate with etcd's auth.
	// Authenticating is a request, so NewClient then needs the cluster
	// to answer within DialTimeout.
	Username, Password string
	// CAFile verifies the members' certificates (empty: the system's
	// roots); CertFile and KeyFile are a client certificate, both or neither.
	CAFile, CertFile, KeyFile string
	// DialTimeout bounds each connection attempt (default 5 s).
	DialTimeout time.Duration
}

// Keepalive pings let the client notice a member that hangs (a frozen
// process, a dead peer behind a silent network) and send requests to the
// others. gRPC does not ping more often than every 10 s; etcd refuses pings
// more often than every 5 s by default.
const (
	etcdKeepAliveTime    = 10 * time.Second
	etcdKeepAliveTimeout = 3 * time.Second
)

// NewClient connects to the cluster. Without credentials it does not
// wait for the cluster: an unreachable cluster shows in the first request.
func NewClient(o ClientOptions) (*clientv3.Client, error) {
	if o.DialTimeout <= 0 {
		o.DialTimeout = 5 * time.Second
	}
	cfg := clientv3.Config{
		Endpoints:            o.Endpoints,
		DialTimeout:          o.DialTimeout,
		DialKeepAliveTime:    etcdKeepAliveTime,
		DialKeepAliveTimeout: etcdKeepAliveTimeout,
		// s3cond logs through zerolog, and the table's errors carry what
		// went wrong; the client's own logger stays silent.
		Logger: zap.NewNop(),
	}
	if o.CAFile != "" || o.CertFile != "" || o.KeyFile != "" {
		tlsConfig, err := etcdTLS(o)
		if err != nil {
			return nil, err
		}
		cfg.TLS = tlsConfig
	}
	var auth *etcdTokenAuth
	if o.Username != "" || o.Password != "" {
		// s3cond keeps the token, not clientv3 (token.go).
		auth = &etcdTokenAuth{username: o.Username, password: o.Password}
		cfg.DialOptions = append(cfg.DialOptions, grpc.WithPerRPCCredentials(auth),
			grpc.WithChainUnaryInterceptor(auth.interceptor))
	}
	client, err := clientv3.New(cfg)
	if err != nil {
		return nil, fmt.Errorf("connect to etcd %v: %w", o.Endpoints, err)
	}
	if auth != nil {
		auth.client = client
		ctx, cancel := context.WithTimeout(context.Background(), o.DialTimeout)
		defer cancel()
		// The error never holds the password: it is the server's answer
		// ("authentication failed, invalid user ID or password").
		if err := auth.authenticate(ctx); err != nil {
			_ = client.Close()
			return nil, fmt.Errorf("connect to etcd %v: %w", o.Endpoints, err)
		}
	}
	return client, nil
}

func etcdTLS(o ClientOptions) (*tls.Config, error) {
	info := transport.TLSInfo{TrustedCAFile: o.CAFile, CertFile: o.CertFile, KeyFile: o.KeyFile}
	tlsConfig, err := info.ClientConfig()
	if err != nil {
		return nil, fmt.Errorf("etcd TLS: %w", err)
	}
	return tlsConfig, nil
}
