package dev.fenceguard.jdbc;

import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import java.sql.Connection;
import java.util.concurrent.atomic.AtomicInteger;
import javax.sql.DataSource;

/** A data source that counts every statement prepared or created on its connections: the round trips a write makes. */
final class CountingStatements {

    private CountingStatements() {}

    static DataSource of(DataSource ds, AtomicInteger statements) {
        return (DataSource) Proxy.newProxyInstance(CountingStatements.class.getClassLoader(), new Class<?>[] {DataSource.class},
                (proxy, m, args) -> {
                    Object out = invoke(ds, m, args);
                    return out instanceof Connection c ? connection(c, statements) : out;
                });
    }

    private static Connection connection(Connection c, AtomicInteger statements) {
        return (Connection) Proxy.newProxyInstance(CountingStatements.class.getClassLoader(), new Class<?>[] {Connection.class},
                (proxy, m, args) -> {
                    if (m.getName().equals("prepareStatement") || m.getName().equals("createStatement") || m.getName().equals("prepareCall")) {
                        statements.incrementAndGet();
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
