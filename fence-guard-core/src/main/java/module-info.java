/**
 * fence-guard's core: fencing tokens, the lock client, the backend SPI, fence rules, idempotency keys,
 * an in-memory backend and the Micrometer bindings. Micrometer is optional: read only when the
 * application's module graph has it.
 *
 * @since 0.1
 */
module dev.fenceguard.core {
    requires org.slf4j;
    requires static micrometer.core;
    requires static micrometer.observation;
    requires static micrometer.commons;

    exports dev.fenceguard.core;
    exports dev.fenceguard.core.idempotency;
    exports dev.fenceguard.core.leader;
    exports dev.fenceguard.core.memory;
    exports dev.fenceguard.core.micrometer;
    exports dev.fenceguard.core.singleflight;
    exports dev.fenceguard.core.spi;
    // Shared by fence-guard's own modules, never an API.
    exports dev.fenceguard.core.internal to
            dev.fenceguard.jdbc, dev.fenceguard.jooq, dev.fenceguard.redis, dev.fenceguard.firestore, dev.fenceguard.dynamodb,
            dev.fenceguard.zookeeper, dev.fenceguard.testkit,
            dev.fenceguard.migrations, dev.fenceguard.reactor, dev.fenceguard.jpa,
            dev.fenceguard.spring, dev.fenceguard.spring.boot.autoconfigure,
            dev.fenceguard.shedlock;
}
