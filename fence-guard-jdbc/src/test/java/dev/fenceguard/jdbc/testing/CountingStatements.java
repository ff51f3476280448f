package dev.fenceguard.jdbc.testing;

import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import java.sql.Connection;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicInteger;
import javax.sql.DataSource;

/** A data source that counts every statement prepared or created on its connections: the round trips a write makes. */
public final class CountingStatements {

    private CountingStatements() {}

    public static DataSource of(DataSource ds, AtomicInteger statements) {
        return of(ds, statements, new ConcurrentLinkedQueue<>());
    }

    /** Also adds the text of every statement prepared to {@code sql}. */
    public static DataSource of(DataSource ds, AtomicInteger statements, Queue<String> sql) {
        return (DataSource) Proxy.newProxyInstance(CountingStatements.class.getClassLoader(), new Class<?>[] {DataSource.class},
                (proxy, m, args) -> {
                    Object out = invoke(ds, m, args);
                    return out instanceof Connection c ? connection(c, statements, sql) : out;
                });
    }

    private static Connection connection(Connection c, AtomicInteger statements, Queue<String> sql) {
        return (Connection) Proxy.newProxyInstance(CountingStatements.class.getClassLoader(), new Class<?>[] {Connection.class},
                (proxy, m, args) -> {
                    if (m.getName().equals("prepareStatement") || m.getName().equals("createStatement") || m.getName().equals("prepareCall")) {
                        statements.incrementAndGet();
                        if (args != null && args.length > 0 && args[0] instanceof String text) {
                            sql.add(text);
                        }
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
