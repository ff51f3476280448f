package dev.fenceguard.jdbc.testing;

import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.util.concurrent.atomic.AtomicInteger;
import javax.sql.DataSource;

/** A data source that counts the connections asked of it: a call that does no I/O asks for none. */
public final class CountingConnections {

    private CountingConnections() {}

    public static DataSource of(DataSource ds, AtomicInteger connections) {
        return (DataSource) Proxy.newProxyInstance(CountingConnections.class.getClassLoader(), new Class<?>[] {DataSource.class},
                (proxy, m, args) -> {
                    if (m.getName().equals("getConnection")) {
                        connections.incrementAndGet();
                    }
                    try {
                        return m.invoke(ds, args);
                    } catch (InvocationTargetException e) {
                        throw e.getCause();
                    }
                });
    }
}
