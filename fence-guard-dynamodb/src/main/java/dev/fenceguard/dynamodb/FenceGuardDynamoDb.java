package dev.fenceguard.dynamodb;

import dev.fenceguard.core.FenceEncoding;
import dev.fenceguard.core.FencePolicy;
import dev.fenceguard.core.FenceStrategy;
import dev.fenceguard.core.LockMetrics;
import dev.fenceguard.core.LockObservations;
import dev.fenceguard.core.TimeSource;
import dev.fenceguard.core.internal.EntrySettings;
import dev.fenceguard.dynamodb.internal.Attributes;
import dev.fenceguard.dynamodb.internal.DynamoDbErrors;
import java.time.Duration;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import software.amazon.awssdk.core.retry.backoff.FixedDelayBackoffStrategy;
import software.amazon.awssdk.core.waiters.WaiterOverrideConfiguration;
import software.amazon.awssdk.services.dynamodb.DynamoDbAsyncClient;
import software.amazon.awssdk.services.dynamodb.model.AttributeDefinition;
import software.amazon.awssdk.services.dynamodb.model.BillingMode;
import software.amazon.awssdk.services.dynamodb.model.CreateTableRequest;
import software.amazon.awssdk.services.dynamodb.model.KeySchemaElement;
import software.amazon.awssdk.services.dynamodb.model.KeyType;
import software.amazon.awssdk.services.dynamodb.model.ResourceInUseException;
import software.amazon.awssdk.services.dynamodb.model.ScalarAttributeType;
import software.amazon.awssdk.services.dynamodb.waiters.DynamoDbAsyncWaiter;

/**
 * fence-guard on one DynamoDB account and region, the one entry of this module: built once from a
 * {@link DynamoDbAsyncClient} with one set of settings, it hands out the {@linkplain #lockBackend() lock
 * backend}, the {@linkplain #idempotencyBackend() idempotency backend}, the {@linkplain #flightStore() flight
 * store} of {@code Singleflight} and the {@linkplain #fencedWrites() fenced writes}, which share the client
 * and the settings. Locks, idempotency entries and flights share one table, each under keys of its own.
 * Both talk to DynamoDB through the asynchronous client only: each operation is one conditional write
 * (and, where the server does not send back the item a condition failed on, one strongly consistent read).
 *
 * <p>Lock and resource key spaces are disjoint by construction: locks live in their own table
 * ({@link Builder#withLockTable}, created by {@link #createLockTable}), and the fenced writes refuse that
 * table and the ones named with {@link Builder#withOtherLockTables}.
 *
 * <p>Expiry is judged by the client's clock, with a skew allowance ({@link Builder#withClockSkewAllowance});
 * see {@link DynamoDbLockBackend} and docs/dynamodb.md. The client stays yours: this class never closes
 * it. Immutable and thread-safe.
 *
 * @since 0.1
 */
public final class FenceGuardDynamoDb {

    /** The lock table's default name. */
    static final String DEFAULT_LOCK_TABLE = "fence_guard_locks";

    private final DynamoDbAsyncClient client;
    private final String lockTable;
    private final DynamoDbLockBackend lockBackend;
    private final DynamoDbIdempotencyBackend idempotencyBackend;
    private final DynamoDbFlightStore flightStore;
    private final Map<FencePolicy, FencedDynamoDb> fencedWrites;

    private FenceGuardDynamoDb(Builder b) {
        this.client = b.client;
        this.lockTable = b.lockTable;
        this.lockBackend = new DynamoDbLockBackend(b.client, b.lockTable, b.strategy, b.skew, b.time);
        this.idempotencyBackend = new DynamoDbIdempotencyBackend(b.client, b.lockTable, b.time);
        this.flightStore = new DynamoDbFlightStore(b.client, b.lockTable, b.time);
        Set<String> refused = new LinkedHashSet<>();
        refused.add(b.lockTable);
        refused.addAll(b.otherLockTables);
        List<String> tables = List.copyOf(refused);
        this.fencedWrites = b.settings.perPolicy(b.encoding, "dynamodb", rule -> new FencedDynamoDb(new AsyncFencedDynamoDb(
                b.client, rule, b.fenceAttribute, b.deletedAttribute, tables, b.settings.callTimeout(), b.lockTable)));
    }

    /**
     * Settings for fence-guard on {@code client}.
     *
     * @throws NullPointerException if {@code client} is null
     * @since 0.1
     */
    public static Builder builder(DynamoDbAsyncClient client) {
        return new Builder(client);
    }

    /**
     * The lock backend: wrap it in a {@link dev.fenceguard.core.LockClient}.
     *
     * @since 0.1
     */
    public DynamoDbLockBackend lockBackend() {
        return lockBackend;
    }

    /**
     * The idempotency backend: wrap it in a {@link dev.fenceguard.core.idempotency.IdempotencyStore}. Its items
     * live in the lock table under keys of their own ({@code "i" + key}; locks are {@code "k" + key}).
     *
     * @since 0.1
     */
    public DynamoDbIdempotencyBackend idempotencyBackend() {
        return idempotencyBackend;
    }

    /**
     * The flight store of {@link dev.fenceguard.core.singleflight.Singleflight}: its items live in the lock
     * table under keys of their own ({@code "f" + key}); waiters are told of results by the store's own
     * watch (see {@link DynamoDbFlightStore}).
     *
     * @since 0.1
     */
    public DynamoDbFlightStore flightStore() {
        return flightStore;
    }

    /**
     * The fenced writes under {@link FencePolicy#SAME_OR_NEWER}: a holder may write many times under one lease.
     *
     * @since 0.1
     */
    public FencedDynamoDb fencedWrites() {
        return fencedWrites(FencePolicy.SAME_OR_NEWER);
    }

    /**
     * The fenced writes under {@code policy}, e.g. {@link FencePolicy#STRICTLY_NEWER} for writes that must
     * happen once per lease.
     *
     * @throws NullPointerException if {@code policy} is null
     * @since 0.1
     */
    public FencedDynamoDb fencedWrites(FencePolicy policy) {
        return fencedWrites.get(Objects.requireNonNull(policy, "policy"));
    }

    /**
     * Creates the lock table if it does not exist, and waits until it is active: key {@code pk} (a string),
     * on-demand capacity ({@code PAY_PER_REQUEST}). Tables you create yourself (CloudFormation, Terraform, CDK)
     * need exactly that key schema; capacity, encryption and tags are yours to choose, and TTL must stay off
     * for the {@code expiresAt} attribute (docs/dynamodb.md).
     *
     * @param wait how long to wait for the table to become active, at least 1 ms and at most 10 minutes
     * @return true if this call created the table, false if it existed
     * @throws NullPointerException if {@code wait} is null
     * @throws IllegalArgumentException if {@code wait} is out of range, before any I/O
     * @throws dev.fenceguard.core.FenceGuardException if DynamoDB refuses ({@code AUTH}, ...) or the table is
     *     not active within {@code wait} ({@code TIMEOUT})
     * @since 0.1
     */
    public boolean createLockTable(Duration wait) {
        return DynamoDbErrors.join(createLockTableAsync(wait), lockTable, "create lock table");
    }

    /**
     * {@link #createLockTable} without waiting.
     *
     * @return a stage of whether this call created the table
     * @throws NullPointerException if {@code wait} is null
     * @throws IllegalArgumentException if {@code wait} is out of range, before any I/O
     * @since 0.1
     */
    public CompletionStage<Boolean> createLockTableAsync(Duration wait) {
        EntrySettings.timeout("wait", wait);
        CreateTableRequest create = CreateTableRequest.builder().tableName(lockTable)
                .keySchema(KeySchemaElement.builder().attributeName(DynamoDbLockBackend.PK).keyType(KeyType.HASH).build())
                .attributeDefinitions(AttributeDefinition.builder().attributeName(DynamoDbLockBackend.PK)
                        .attributeType(ScalarAttributeType.S).build())
                .billingMode(BillingMode.PAY_PER_REQUEST).build();
        long attempts = Math.max(1, wait.toMillis() / 100);
        DynamoDbAsyncWaiter waiter = DynamoDbAsyncWaiter.builder().client(client)
                .overrideConfiguration(WaiterOverrideConfiguration.builder()
                        .backoffStrategy(FixedDelayBackoffStrategy.create(Duration.ofMillis(100)))
                        .maxAttempts((int) Math.min(Integer.MAX_VALUE, attempts)).waitTimeout(wait).build())
                .build();
        return client.createTable(create).handle((created, error) -> {
            if (error != null && !(dev.fenceguard.core.internal.Stages.unwrap(error) instanceof ResourceInUseException)) {
                return CompletableFuture.<Boolean>failedFuture(DynamoDbErrors.failure(error, lockTable, "create lock table"));
            }
            boolean made = error == null;
            return waiter.waitUntilTableExists(r -> r.tableName(lockTable)).handle((done, waitError) -> {
                waiter.close();
                if (waitError != null) {
                    throw timedOut(waitError, wait);
                }
                if (done.matched().exception().isPresent()) {
                    throw timedOut(done.matched().exception().get(), wait);
                }
                return made;
            });
        }).thenCompose(stage -> stage);
    }

    private dev.fenceguard.core.FenceGuardException timedOut(Throwable error, Duration wait) {
        Throwable c = dev.fenceguard.core.internal.Stages.unwrap(error);
        if (c instanceof software.amazon.awssdk.awscore.exception.AwsServiceException) {
            return DynamoDbErrors.failure(c, lockTable, "create lock table");
        }
        return new dev.fenceguard.core.FenceGuardException(dev.fenceguard.core.ErrorCode.TIMEOUT, lockTable,
                "the lock table was not active within " + wait, c);
    }

    @Override
    public String toString() {
        return "FenceGuardDynamoDb[" + lockBackend + ", " + fencedWrites() + "]";
    }

    /**
     * Settings of a {@link FenceGuardDynamoDb}. Not thread-safe; {@link #build()} copies them, so a
     * builder can be reused.
     *
     * @since 0.1
     */
    public static final class Builder {
        private final DynamoDbAsyncClient client;
        private final EntrySettings settings = new EntrySettings();
        private String lockTable = DEFAULT_LOCK_TABLE;
        private List<String> otherLockTables = List.of();
        private FenceStrategy strategy = FenceStrategy.DENSE;
        private Duration skew = Duration.ofSeconds(1);
        private FenceEncoding encoding = FenceEncoding.INTEGER;
        private String fenceAttribute = "_fence";
        private String deletedAttribute = "_deleted";
        private TimeSource time = TimeSource.system();

        private Builder(DynamoDbAsyncClient client) {
            this.client = Objects.requireNonNull(client, "client");
        }

        /**
         * The table holding the lock items; default {@code fence_guard_locks}. Its key is {@code pk}, a
         * string ({@link FenceGuardDynamoDb#createLockTable}). The fenced writes refuse every item in it.
         *
         * @throws IllegalArgumentException if it is not a DynamoDB table name (3 to 255 characters of
         *     {@code a-z A-Z 0-9 _ - .})
         * @throws NullPointerException if {@code table} is null
         * @since 0.1
         */
        public Builder withLockTable(String table) {
            this.lockTable = Attributes.requireTableName("lockTable", table);
            return this;
        }

        /**
         * The lock tables of <em>other</em> lock backends in the same account and region; none by default.
         * The fenced writes refuse items in them, as they always do for this instance's own lock table.
         * Replaces the previous list.
         *
         * @throws IllegalArgumentException if a name is not a DynamoDB table name
         * @throws NullPointerException if {@code tables} or one of them is null
         * @since 0.1
         */
        public Builder withOtherLockTables(String... tables) {
            this.otherLockTables = EntrySettings.each("tables", tables, t -> Attributes.requireTableName("otherLockTables", t));
            return this;
        }

        /**
         * How long one call may take: one lock grant, release, extend or lookup is bounded by the timeout its
         * {@link dev.fenceguard.core.LockClient} passes; this bounds one fenced write, from the call to its
         * answer (the read after a failed condition, and a retry, included); default 10 s. A write still
         * unanswered then fails with {@code TIMEOUT} (it may still have been applied).
         *
         * @throws IllegalArgumentException if below 1 ms or above 10 minutes
         * @throws NullPointerException if {@code timeout} is null
         * @since 0.1
         */
        public Builder withCallTimeout(Duration timeout) {
            settings.callTimeout(timeout);
            return this;
        }

        /**
         * How far the clocks of the clients sharing the lock table may disagree; default 1 second. DynamoDB
         * cannot read a server clock in a condition, so lease expiry is judged by each client's clock: an
         * acquisition takes over an expired lease only once its expiry is this much behind the acquirer's
         * clock, so a lease whose holder's clock is behind by up to this much is not taken over while its
         * holder still counts it valid. Larger values delay the takeover of leases whose holder died by as
         * much; extensions and releases are not delayed. Fences stay safe whatever the clocks do
         * (docs/dynamodb.md).
         *
         * @throws IllegalArgumentException if negative or longer than 10 minutes
         * @throws NullPointerException if {@code allowance} is null
         * @since 0.1
         */
        public Builder withClockSkewAllowance(Duration allowance) {
            Objects.requireNonNull(allowance, "allowance");
            if (allowance.isNegative() || allowance.compareTo(Duration.ofMinutes(10)) > 0) {
                throw new IllegalArgumentException("clockSkewAllowance must be between 0 and 10 minutes, was " + allowance);
            }
            this.skew = allowance;
            return this;
        }

        /**
         * How the lock backend chooses fences: {@link FenceStrategy#DENSE} (default: 1, 2, 3, ... per key) or
         * {@link FenceStrategy#CLOCK_FLOORED} (above the floor of the client's clock, so that a lock item lost
         * or rolled back by a point-in-time restore still issues fences above those issued before). Every
         * instance sharing the lock table must use the same strategy; switching from {@code DENSE} to
         * {@code CLOCK_FLOORED} keeps fences rising, switching back does not.
         *
         * @throws NullPointerException if {@code strategy} is null
         * @since 0.1
         */
        public Builder withFenceStrategy(FenceStrategy strategy) {
            this.strategy = Objects.requireNonNull(strategy, "strategy");
            return this;
        }

        /**
         * How resources store their fence: a number attribute (default) or the 15-character text form.
         *
         * @throws NullPointerException if {@code encoding} is null
         * @since 0.1
         */
        public Builder withEncoding(FenceEncoding encoding) {
            this.encoding = Objects.requireNonNull(encoding, "encoding");
            return this;
        }

        /**
         * The attribute of a resource item that holds its fence; default {@code _fence}.
         *
         * @throws IllegalArgumentException if empty or equal to the deleted attribute
         * @throws NullPointerException if {@code attribute} is null
         * @since 0.1
         */
        public Builder withFenceAttribute(String attribute) {
            this.fenceAttribute = attribute("fenceAttribute", attribute, "deletedAttribute", deletedAttribute);
            return this;
        }

        /**
         * The attribute that marks a resource item as a tombstone; default {@code _deleted}.
         *
         * @throws IllegalArgumentException if empty or equal to the fence attribute
         * @throws NullPointerException if {@code attribute} is null
         * @since 0.1
         */
        public Builder withDeletedAttribute(String attribute) {
            this.deletedAttribute = attribute("deletedAttribute", attribute, "fenceAttribute", fenceAttribute);
            return this;
        }

        /**
         * Where stale-write rejections are counted; default {@link LockMetrics#automatic()}.
         *
         * @throws NullPointerException if {@code metrics} is null
         * @since 0.1
         */
        public Builder withMetrics(LockMetrics metrics) {
            settings.metrics(metrics);
            return this;
        }

        /**
         * Where each fenced write is observed: one {@code fenceguard.write} observation per call, with
         * {@code backend} {@code dynamodb}, {@code resource.type} the table name, the {@code operation}
         * ({@code update}, {@code put}, {@code claim}, {@code delete}, {@code transaction} for
         * {@link FencedDynamoDb#transactWriteItems}) and the {@code outcome}. Default
         * {@link LockObservations#none()}.
         *
         * @throws NullPointerException if {@code observations} is null
         * @since 0.1
         */
        public Builder withObservations(LockObservations observations) {
            settings.observations(observations);
            return this;
        }

        /** Test seam, not API: the client clock that judges expiry. */
        Builder withTimeSource(TimeSource time) {
            this.time = Objects.requireNonNull(time, "time");
            return this;
        }

        /**
         * A new instance with these settings. Does no I/O.
         *
         * @since 0.1
         */
        public FenceGuardDynamoDb build() {
            return new FenceGuardDynamoDb(this);
        }

        private static String attribute(String setting, String name, String otherSetting, String other) {
            Objects.requireNonNull(name, setting);
            if (name.isEmpty() || name.equals(other)) {
                throw new IllegalArgumentException(setting + " must be non-empty and differ from " + otherSetting + " '"
                        + other + "', was '" + name + "'");
            }
            return name;
        }
    }
}
