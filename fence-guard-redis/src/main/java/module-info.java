/**
 * fence-guard on Redis through Lettuce: the lock backend and fenced writes (Lua scripts).
 *
 * @since 0.1
 */
module dev.fenceguard.redis {
    requires transitive dev.fenceguard.core;
    requires transitive lettuce.core;
    requires org.slf4j;
    // Lettuce is an automatic module, so it cannot require Netty's named modules (Netty 4.2 has
    // descriptors), and on the module path nothing else would resolve them: these stand in for
    // Lettuce's own requires. fence-guard uses no Netty class.
    requires io.netty.common;
    requires io.netty.buffer;
    requires io.netty.transport;
    requires io.netty.handler;
    requires io.netty.codec;
    requires io.netty.resolver;
    requires io.netty.resolver.dns;

    exports dev.fenceguard.redis;
}
