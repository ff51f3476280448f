package dev.fenceguard.jdbc.testing;

import dev.fenceguard.core.spi.LockBackend;
import dev.fenceguard.jdbc.internal.TableSettings;
import java.lang.reflect.Constructor;
import java.lang.reflect.InvocationTargetException;
import javax.sql.DataSource;

/**
 * The lock backend of a named dialect on given settings, for tests outside fence-guard-jdbc's package: as
 * {@code FenceGuardJdbc} builds them, but without learning the database (the MySQL backend on the MariaDB
 * test server, a data source that fails or counts). The backends are not public, hence the reflection.
 */
public final class LockBackends {

    private LockBackends() {}

    public static LockBackend postgres(DataSource dataSource, String schema, String table) {
        return make("PostgresLockBackend", settings(dataSource, schema, table));
    }

    public static LockBackend mariaDb(DataSource dataSource, String schema, String table) {
        return make("MariaDbLockBackend", settings(dataSource, schema, table));
    }

    public static LockBackend mySql(DataSource dataSource, String schema, String table) {
        return make("MySqlLockBackend", settings(dataSource, schema, table));
    }

    // TableSettings stays inside this class: fence-guard-jdbc exports its internal package to fence-guard-jooq's
    // main module only, so tests patched into that module must not name it.
    private static TableSettings settings(DataSource dataSource, String schema, String table) {
        return TableSettings.of(dataSource).withSchema(schema).withTable(table);
    }

    private static LockBackend make(String name, TableSettings settings) {
        try {
            Constructor<?> c = Class.forName("dev.fenceguard.jdbc." + name).getDeclaredConstructor(TableSettings.class);
            c.setAccessible(true);
            return (LockBackend) c.newInstance(settings);
        } catch (InvocationTargetException e) {
            throw e.getCause() instanceof RuntimeException r ? r : new IllegalStateException(e.getCause());
        } catch (ReflectiveOperationException e) {
            throw new IllegalStateException("fence-guard-jdbc has no " + name + "(TableSettings)", e);
        }
    }
}
