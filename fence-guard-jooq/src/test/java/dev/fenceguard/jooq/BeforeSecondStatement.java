package dev.fenceguard.jooq;

import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import java.sql.Connection;
import java.util.concurrent.atomic.AtomicInteger;
import javax.sql.DataSource;

/**
 * A data source whose connections run {@code between} (e.g. another writer's statement, on a connection of
 * its own) once, just before the second statement prepared on them: it puts a concurrent write exactly
 * between the two statements of a write, with no timing involved. Counts the statements prepared.
 */
final class BeforeSecondStatement {

    private BeforeSecondStatement() {}

    static DataSource of(DataSource ds, AtomicInteger statements, Runnable between) {
        return (DataSource) Proxy.newProxyInstance(BeforeSecondStatement.class.getClassLoader(), new Class<?>[] {DataSource.class},
                (proxy, m, args) -> {
                    Object out = invoke(ds, m, args);
                    return out instanceof Connection c ? connection(c, statements, between) : out;
                });
    }

    private static Connection connection(Connection c, AtomicInteger statements, Runnable between) {
        return (Connection) Proxy.newProxyInstance(BeforeSecondStatement.class.getClassLoader(), new Class<?>[] {Connection.class},
                (proxy, m, args) -> {
                    if (m.getName().equals("prepareStatement") && statements.incrementAndGet() == 2) {
                        between.run();
                    }
                    return invoke(c, m, args);
                });
    }

    private static Object invoke(Object target, Method m, Object[] args) throws Throwable {
        try {
            return m.invoke(target, args);
        } catch (InvocationTargetException e) {
            throw e.getCause();
        }
    }
}
