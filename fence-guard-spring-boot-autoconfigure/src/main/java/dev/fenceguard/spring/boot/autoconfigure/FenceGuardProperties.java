package dev.fenceguard.spring.boot.autoconfigure;

import dev.fenceguard.core.FenceStrategy;
import dev.fenceguard.core.internal.Checks;
import dev.fenceguard.core.internal.SqlIdentifiers;
import java.time.Duration;
import java.util.function.Consumer;
import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.core.Ordered;
import org.springframework.validation.Errors;
import org.springframework.validation.Validator;

/**
 * The {@code fence-guard.*} settings of the Spring Boot auto-configuration. Values are checked when the
 * application starts, before any backend is built: an invalid one fails startup with a message that
 * names the property, its value and what is wrong (settings that only a backend module understands,
 * such as the Redis key prefix, are checked by that module's builder when the backend is built, and the
 * failure names the property as well).
 *
 * @since 0.1
 */
@ConfigurationProperties(prefix = FenceGuardProperties.PREFIX)
public class FenceGuardProperties implements Validator {

    /** The prefix of every property here. */
    public static final String PREFIX = "fence-guard";

    /** Schema of the lock table on PostgreSQL when {@code fence-guard.jdbc.schema} is unset. */
    static final String DEFAULT_POSTGRESQL_SCHEMA = "public";

    /** Which store holds the locks when the application has more than one. */
    public enum Backend {
        /**
         * The SQL database of the application's {@code DataSource}: PostgreSQL, MariaDB or MySQL, each with
         * its lock backend.
         */
        JDBC,
        /** A Redis lock backend over the application's Lettuce {@code RedisClient} or {@code LettuceConnectionFactory}. */
        REDIS,
        /** A Firestore lock backend over the application's {@code Firestore}. */
        FIRESTORE
    }

    /**
     * The lock backend. Needed only when the application has more than one of a DataSource, a Redis
     * client and a Firestore; with exactly one, that one is used.
     */
    private Backend backend;

    /** TTL of a @FencedLock lease whose annotation sets none. */
    private Duration defaultTtl = Duration.ofSeconds(30);

    /** How long a @FencedLock method waits for the lock when its annotation sets no wait. */
    private Duration defaultWait = Duration.ofSeconds(5);

    /** How long one acquire or lookup call may take (1 ms to 10 min); the client's default (10 s) when unset. */
    private Duration callTimeout;

    /** How long a release may take before the lock is left to expire (1 ms to 10 min); the client's default (2 s) when unset. */
    private Duration releaseTimeout;

    /** A SQL database fence-guard has a lock backend for. */
    public enum JdbcDatabase {
        /** PostgreSQL. */
        POSTGRESQL,
        /** MariaDB 10.5+ (tested on 10.11), through MariaDB Connector/J or MySQL Connector/J. */
        MARIADB,
        /** MySQL 8.0.19+. */
        MYSQL
    }

    /**
     * How fences are chosen (dense or clock-floored); the backend's default when unset: DENSE on
     * PostgreSQL, MariaDB and MySQL, CLOCK_FLOORED on Redis; on Firestore DENSE, or CLOCK_FLOORED when
     * fence-guard.firestore.horizon is set.
     */
    private FenceStrategy fenceStrategy;

    private final Jdbc jdbc = new Jdbc();
    private final Redis redis = new Redis();
    private final Firestore firestore = new Firestore();
    private final Metrics metrics = new Metrics();
    private final Observations observations = new Observations();
    private final Annotation annotation = new Annotation();
    private final SpringIntegration springIntegration = new SpringIntegration();
    private final Shedlock shedlock = new Shedlock();
    private final Purge purge = new Purge();

    public Backend getBackend() {
        return backend;
    }

    public void setBackend(Backend backend) {
        this.backend = backend;
    }

    public Duration getDefaultTtl() {
        return defaultTtl;
    }

    public void setDefaultTtl(Duration defaultTtl) {
        this.defaultTtl = defaultTtl;
    }

    public Duration getDefaultWait() {
        return defaultWait;
    }

    public void setDefaultWait(Duration defaultWait) {
        this.defaultWait = defaultWait;
    }

    public Duration getCallTimeout() {
        return callTimeout;
    }

    public void setCallTimeout(Duration callTimeout) {
        this.callTimeout = callTimeout;
    }

    public Duration getReleaseTimeout() {
        return releaseTimeout;
    }

    public void setReleaseTimeout(Duration releaseTimeout) {
        this.releaseTimeout = releaseTimeout;
    }

    public FenceStrategy getFenceStrategy() {
        return fenceStrategy;
    }

    public void setFenceStrategy(FenceStrategy fenceStrategy) {
        this.fenceStrategy = fenceStrategy;
    }

    public Jdbc getJdbc() {
        return jdbc;
    }

    public Redis getRedis() {
        return redis;
    }

    public Firestore getFirestore() {
        return firestore;
    }

    public Metrics getMetrics() {
        return metrics;
    }

    public Observations getObservations() {
        return observations;
    }

    public Annotation getAnnotation() {
        return annotation;
    }

    public SpringIntegration getSpringIntegration() {
        return springIntegration;
    }

    public Shedlock getShedlock() {
        return shedlock;
    }

    /** Settings of the lock backend over the application's DataSource (PostgreSQL, MariaDB or MySQL). */
    public static class Jdbc {
        /**
         * The database the DataSource is to; asked of one of its connections at startup when unset. Set it
         * to start while the database is down: it chooses the lock table's migration and default schema, and
         * the lock backend is then built on its first call by fence-guard-jdbc's entry, which asks the
         * database itself (so it cannot make MariaDB run MySQL's backend).
         */
        private JdbcDatabase database;
        /**
         * Schema of the lock table (on MariaDB and MySQL: its database); when unset, public on PostgreSQL, the
         * connection's database on MariaDB and MySQL.
         */
        private String schema;
        /** Name of the lock table. */
        private String table = "fence_guard_locks";
        /**
         * Whether Spring Boot's Flyway run also creates or upgrades the lock table (needs
         * fence-guard-migrations and spring-boot-flyway on the class path and spring.flyway.enabled).
         */
        private boolean flyway = true;
        /** Whether startup fails when the lock table does not exist (checked once, after Flyway has run). */
        private boolean verifyTable = true;

        public JdbcDatabase getDatabase() {
            return database;
        }

        public void setDatabase(JdbcDatabase database) {
            this.database = database;
        }

        public String getSchema() {
            return schema;
        }

        public void setSchema(String schema) {
            this.schema = schema;
        }

        public String getTable() {
            return table;
        }

        public void setTable(String table) {
            this.table = table;
        }

        public boolean isFlyway() {
            return flyway;
        }

        public void setFlyway(boolean flyway) {
            this.flyway = flyway;
        }

        public boolean isVerifyTable() {
            return verifyTable;
        }

        public void setVerifyTable(boolean verifyTable) {
            this.verifyTable = verifyTable;
        }
    }

    /**
     * Settings every store entry (Redis, Firestore) has: the bound on one fenced write, and the horizon and
     * clock margin of its fence records (docs/fence-lifecycle.md).
     */
    public abstract static class Store {
        /** Bound on one fenced write (the module's default, 10 s, when unset). */
        private Duration callTimeout;
        /**
         * Holds the fenced writes to a horizon, so that their fence records can be forgotten with no bound on
         * pauses (docs/fence-lifecycle.md): on Redis tombstones then expire on their own; on Firestore
         * FencedFirestore.purge can remove them, and the lock backend issues CLOCK_FLOORED fences. None when unset.
         */
        private Duration horizon;
        /** How far the store's clock may step back (docs/fence-lifecycle.md); the module's default, 5 minutes, when unset. */
        private Duration clockMargin;

        Store() {}

        public Duration getCallTimeout() {
            return callTimeout;
        }

        public void setCallTimeout(Duration callTimeout) {
            this.callTimeout = callTimeout;
        }

        public Duration getHorizon() {
            return horizon;
        }

        public void setHorizon(Duration horizon) {
            this.horizon = horizon;
        }

        public Duration getClockMargin() {
            return clockMargin;
        }

        public void setClockMargin(Duration clockMargin) {
            this.clockMargin = clockMargin;
        }
    }

    /** Settings of the Redis lock backend and fenced writes. */
    public static class Redis extends Store {
        /** Prefix of every lock key (the module's default, fg:, when unset). */
        private String keyPrefix;
        /** Prefix of the fence keys of fenced writes (the module's default when unset). */
        private String fenceKeyPrefix;

        public String getKeyPrefix() {
            return keyPrefix;
        }

        public void setKeyPrefix(String keyPrefix) {
            this.keyPrefix = keyPrefix;
        }

        public String getFenceKeyPrefix() {
            return fenceKeyPrefix;
        }

        public void setFenceKeyPrefix(String fenceKeyPrefix) {
            this.fenceKeyPrefix = fenceKeyPrefix;
        }
    }

    /** Settings of the Firestore lock backend and fenced writes. */
    public static class Firestore extends Store {
        /** Collection of the lock documents (the module's default when unset). */
        private String collection;

        public String getCollection() {
            return collection;
        }

        public void setCollection(String collection) {
            this.collection = collection;
        }
    }

    /** Micrometer meters. */
    public static class Metrics {
        /** Whether lock and fenced-write meters go to the application's MeterRegistry (when there is one). */
        private boolean enabled = true;

        public boolean isEnabled() {
            return enabled;
        }

        public void setEnabled(boolean enabled) {
            this.enabled = enabled;
        }
    }

    /** Micrometer observations (traces). */
    public static class Observations {
        /** Whether lock operations and fenced writes are observed through the application's ObservationRegistry (when there is one). */
        private boolean enabled = true;

        public boolean isEnabled() {
            return enabled;
        }

        public void setEnabled(boolean enabled) {
            this.enabled = enabled;
        }
    }

    /** fence-guard-spring-integration's lock registry (needs it and spring-integration-core on the class path). */
    public static class SpringIntegration {
        /**
         * Whether the application's LockRegistry is a FencedLockRegistry over the lock client (unless the
         * application defines a LockRegistry of its own).
         */
        private boolean enabled;
        /** TTL of the registry's leases taken without one; when unset, fence-guard.default-ttl. */
        private Duration ttl;

        public boolean isEnabled() {
            return enabled;
        }

        public void setEnabled(boolean enabled) {
            this.enabled = enabled;
        }

        public Duration getTtl() {
            return ttl;
        }

        public void setTtl(Duration ttl) {
            this.ttl = ttl;
        }
    }

    /** The @FencedLock annotation. */
    public static class Annotation {
        /** Whether methods annotated with @FencedLock run under the lock. */
        private boolean enabled = true;
        /**
         * Order of the @FencedLock advice. It must come before (be lower than) the order of the
         * transaction advice, so that the lock is taken before the transaction begins; startup fails
         * otherwise.
         */
        private int order = Ordered.LOWEST_PRECEDENCE - 1000;

        public boolean isEnabled() {
            return enabled;
        }

        public void setEnabled(boolean enabled) {
            this.enabled = enabled;
        }

        public int getOrder() {
            return order;
        }

        public void setOrder(int order) {
            this.order = order;
        }
    }

    /** ShedLock: the fenced LockProvider of fence-guard-shedlock. */
    public static class Shedlock {
        /**
         * Whether to make fence-guard-shedlock's FencedLockProvider the application's ShedLock LockProvider,
         * over the lock client. Needs ShedLock and fence-guard-shedlock on the class path; a LockProvider
         * the application defines itself is kept (and a warning says so).
         */
        private boolean enabled = false;

        public boolean isEnabled() {
            return enabled;
        }

        public void setEnabled(boolean enabled) {
            this.enabled = enabled;
        }
    }

    /** Scheduled purges of fence records (docs/fence-lifecycle.md): the targets are the application's FencePurges beans. */
    public static class Purge {
        /**
         * Whether to run the purges of the application's FencePurges beans on a schedule. What each purge
         * may remove is decided by the horizon its table or store was built with, never by these settings.
         */
        private boolean enabled = false;
        /** Time from the end of one round of purges to the start of the next; the first round starts one interval after startup. */
        private Duration interval = Duration.ofHours(1);
        /** The most records one batch of a purge removes (1 to 100000). */
        private Integer batchSize = 1_000;
        /** How long one target's purge keeps starting batches; it resumes where it stopped on the next round. */
        private Duration maxDuration = Duration.ofSeconds(10);

        public boolean isEnabled() {
            return enabled;
        }

        public void setEnabled(boolean enabled) {
            this.enabled = enabled;
        }

        public Duration getInterval() {
            return interval;
        }

        public void setInterval(Duration interval) {
            this.interval = interval;
        }

        public Integer getBatchSize() {
            return batchSize;
        }

        public void setBatchSize(Integer batchSize) {
            this.batchSize = batchSize;
        }

        public Duration getMaxDuration() {
            return maxDuration;
        }

        public void setMaxDuration(Duration maxDuration) {
            this.maxDuration = maxDuration;
        }
    }

    public Purge getPurge() {
        return purge;
    }

    @Override
    public boolean supports(Class<?> type) {
        return FenceGuardProperties.class.isAssignableFrom(type);
    }

    /** Rejects values the lock client or a backend would refuse, naming the property (Spring Boot adds the prefix). */
    @Override
    public void validate(Object target, Errors errors) {
        FenceGuardProperties p = (FenceGuardProperties) target;
        check(errors, "default-ttl", p.defaultTtl, v -> Checks.ttl(v, "@FencedLock default"));
        check(errors, "default-wait", p.defaultWait, v -> Checks.maxWait(v, "@FencedLock default"));
        check(errors, "call-timeout", p.callTimeout, FenceGuardProperties::timeout);
        check(errors, "release-timeout", p.releaseTimeout, FenceGuardProperties::timeout);
        check(errors, "jdbc.schema", p.jdbc.schema, v -> SqlIdentifiers.require("schema", v));
        check(errors, "jdbc.table", p.jdbc.table, v -> SqlIdentifiers.require("table", v));
        check(errors, "redis.call-timeout", p.redis.getCallTimeout(), FenceGuardProperties::positive);
        check(errors, "firestore.call-timeout", p.firestore.getCallTimeout(), FenceGuardProperties::positive);
        check(errors, "spring-integration.ttl", p.springIntegration.ttl, v -> Checks.ttl(v, "Spring Integration lock registry"));
        check(errors, "purge.interval", p.purge.interval, FenceGuardProperties::positive);
        check(errors, "purge.batch-size", p.purge.batchSize, v -> dev.fenceguard.core.Purge.ofDefaults().withBatchSize(v));
        check(errors, "purge.max-duration", p.purge.maxDuration, v -> dev.fenceguard.core.Purge.ofDefaults().withMaxDuration(v));
    }

    /** Each message names the property as it is written in application.properties. */
    private static <T> void check(Errors errors, String property, T value, Consumer<T> check) {
        if (value == null) {
            if (property.startsWith("default-") || property.equals("jdbc.table") || property.startsWith("purge.")) {
                errors.rejectValue(field(property), "fence-guard.required", PREFIX + "." + property + " must be set");
            }
            return;
        }
        try {
            check.accept(value);
        } catch (IllegalArgumentException e) {
            errors.rejectValue(field(property), "fence-guard.invalid", "invalid " + PREFIX + "." + property + " '" + value + "': "
                    + e.getMessage());
        }
    }

    private static String field(String property) {
        StringBuilder b = new StringBuilder();
        boolean upper = false;
        for (char c : property.toCharArray()) {
            if (c == '-') {
                upper = true;
            } else {
                b.append(upper ? Character.toUpperCase(c) : c);
                upper = false;
            }
        }
        return b.toString();
    }

    private static void timeout(Duration d) {
        if (d.compareTo(Duration.ofMillis(1)) < 0 || d.compareTo(Duration.ofMinutes(10)) > 0) {
            throw new IllegalArgumentException("must be between 1 ms and 10 minutes, was " + d);
        }
    }

    private static void positive(Duration d) {
        if (d.isNegative() || d.isZero()) {
            throw new IllegalArgumentException("must be positive, was " + d);
        }
    }
}
