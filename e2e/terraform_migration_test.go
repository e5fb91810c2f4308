package e2e

import (
	"context"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	ddbtypes "github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/s3cond/s3cond/dynamolease/dynamostore"
	"github.com/s3cond/s3cond/internal/testservers"
)

// The phases of docs/recipes/terraform.md's move from dynamodb_table to
// use_lockfile, replayed by e2e/terraformlock through s3cond in front of
// s3rver (a store that ignores If-None-Match), Terraform's lock table on
// dynalite: (a) dynamodb_table only, (b) both, (c) use_lockfile only.
const (
	phaseA = "dynamodb"
	phaseB = "both"
	phaseC = "file"
)

// terraformLockTable is the dynamodb_table: partition key LockID (S), as
// Terraform's documentation creates it.
const terraformLockTable = "terraform-locks"

// terraformMigrationEnv is s3cond (leases on dynalite) in front of s3rver
// with a "tfstate" bucket, and Terraform's lock table on the same dynalite.
func terraformMigrationEnv(t *testing.T) (e *Env, dynamoEndpoint string) {
	t.Helper()
	dynamoEndpoint = testservers.StartDynalite(t)
	e = NewEnv(t, WithBackend(BackendS3rver), WithDynamoDBLeases(dynamoEndpoint))
	e.RequireProxy(t)
	CreateBucket(t, e.Client(t, e.RW), "tfstate")
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	ddb, err := dynamostore.NewClient(ctx, Region, dynamoEndpoint, credentials.NewStaticCredentialsProvider("testing", "testing", ""))
	if err != nil {
		t.Fatal(err)
	}
	_, err = ddb.CreateTable(ctx, &dynamodb.CreateTableInput{TableName: aws.String(terraformLockTable),
		AttributeDefinitions: []ddbtypes.AttributeDefinition{{AttributeName: aws.String("LockID"), AttributeType: ddbtypes.ScalarAttributeTypeS}},
		KeySchema:            []ddbtypes.KeySchemaElement{{AttributeName: aws.String("LockID"), KeyType: ddbtypes.KeyTypeHash}},
		BillingMode:          ddbtypes.BillingModePayPerRequest})
	if err != nil {
		t.Fatalf("create the lock table: %v", err)
	}
	// dynalite keeps a new table CREATING for a moment; the waiter's default
	// first delay (20 s) would outlast the whole wait.
	active := dynamodb.NewTableExistsWaiter(ddb, func(o *dynamodb.TableExistsWaiterOptions) {
		o.MinDelay, o.MaxDelay = 100*time.Millisecond, time.Second
	})
	if err := active.Wait(ctx, &dynamodb.DescribeTableInput{TableName: aws.String(terraformLockTable)}, 20*time.Second); err != nil {
		t.Fatalf("the lock table never became active: %v", err)
	}
	return e, dynamoEndpoint
}

// terraformPhaseProcess is a replay process in phase (a), (b) or (c). The
// digest check is shortened from Terraform's 10 s (every 2 s) to 500 ms
// (every 100 ms), so a refused read costs the test little.
func terraformPhaseProcess(e *Env, dynamoEndpoint, phase string, rounds int, deadline time.Duration) terraformProcess {
	return terraformProcess{endpoint: e.Endpoint, rounds: rounds, deadline: deadline, args: []string{"-lock", phase,
		"-dynamodb-endpoint", dynamoEndpoint, "-table", terraformLockTable, "-consistency-timeout", "500ms", "-consistency-poll", "100ms"}}
}

// playTerraformPhases runs one process per phase at once on the state key,
// and returns the totals, the reports and the state's final serial.
func playTerraformPhases(t *testing.T, e *Env, dynamoEndpoint, key string, phases []string, rounds int, deadline time.Duration) (terraformTotals, []terraformReport, int) {
	t.Helper()
	var procs []terraformProcess
	for _, phase := range phases {
		procs = append(procs, terraformPhaseProcess(e, dynamoEndpoint, phase, rounds, deadline))
	}
	reports := runTerraformProcesses(t, procs, e.RW, "tfstate", key)
	tot := sumTerraformReports(reports)
	serial, ok := terraformStateSerial(t, e.Store, "tfstate", key)
	if !ok {
		t.Fatalf("phases %v: the state is no JSON document: two writers interleaved", phases)
	}
	t.Logf("phases %v: %s; final serial %d", phases, tot, serial)
	return tot, reports, serial
}

// requireOneHolderNoLostWrite: never two holders, every state write kept.
func requireOneHolderNoLostWrite(t *testing.T, phases []string, tot terraformTotals, serial int) {
	t.Helper()
	if tot.twoHolders != 0 {
		t.Errorf("phases %v: %d rounds had two lock holders at once", phases, tot.twoHolders)
	}
	if serial != tot.rounds || len(tot.duplicateSerials) != 0 {
		t.Errorf("phases %v: state serial %d after %d state writes (duplicate serials %v): state writes lost", phases, serial, tot.rounds, tot.duplicateSerials)
	}
	if tot.lockHeld == 0 {
		t.Errorf("phases %v: no lock attempt was refused: the processes did not contend", phases)
	}
}

// TestTerraformMigrationPhasesTakeTurns: processes in phases (a) and (b)
// meet on the lock item, processes in (b) and (c) on the lock file through
// s3cond: never two holders, no state write lost. In (b)+(c) a phase (b)
// process refuses the state once a phase (c) process has written it (the
// digest item still names the state before), and writes nothing more.
func TestTerraformMigrationPhasesTakeTurns(t *testing.T) {
	t.Parallel()
	e, dynamoEndpoint := terraformMigrationEnv(t)
	const rounds = 15

	ab := []string{phaseA, phaseB, phaseB}
	tot, _, serial := playTerraformPhases(t, e, dynamoEndpoint, "ab/terraform.tfstate", ab, rounds, 60*time.Second)
	requireOneHolderNoLostWrite(t, ab, tot, serial)
	if tot.rounds != len(ab)*rounds || tot.staleDigests != 0 {
		t.Errorf("phases %v: %d state writes (want %d), %d stale digests (want 0)", ab, tot.rounds, len(ab)*rounds, tot.staleDigests)
	}

	bc := []string{phaseB, phaseC, phaseC}
	tot, reports, serial := playTerraformPhases(t, e, dynamoEndpoint, "bc/terraform.tfstate", bc, rounds, 20*time.Second)
	requireOneHolderNoLostWrite(t, bc, tot, serial)
	b, c := reports[0], sumTerraformReports(reports[1:])
	if c.rounds != 2*rounds {
		t.Errorf("phase (c) processes made %d state writes; want %d", c.rounds, 2*rounds)
	}
	if b.StaleDigests == 0 || b.Rounds == rounds {
		t.Errorf("the phase (b) process: %d stale digests, %d of %d rounds; want it stopped by the digest once (c) wrote the state", b.StaleDigests, b.Rounds, rounds)
	}
}

// TestNegativeControlTerraformMigrationPhasesAAndC: a phase (a) process
// locks only the item and a phase (c) process only the file: both hold
// the lock at once.
func TestNegativeControlTerraformMigrationPhasesAAndC(t *testing.T) {
	t.Parallel()
	e, dynamoEndpoint := terraformMigrationEnv(t)
	ac := []string{phaseA, phaseC}
	tot, _, serial := playTerraformPhases(t, e, dynamoEndpoint, "ac/terraform.tfstate", ac, 15, 20*time.Second)
	lost := serial != tot.rounds || len(tot.duplicateSerials) != 0
	if tot.twoHolders == 0 && !lost {
		t.Fatalf("phases %v: no two holders and no lost state write: the control measured nothing", ac)
	}
	t.Logf("as expected: %d rounds with two holders, writes lost: %v", tot.twoHolders, lost)
}
