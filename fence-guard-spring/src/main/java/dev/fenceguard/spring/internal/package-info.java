/** The {@code @FencedLock} advice; not for users. */
package dev.fenceguard.spring.internal;
