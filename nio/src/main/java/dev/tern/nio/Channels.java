package dev.tern.nio;

import java.lang.ref.Cleaner;
import java.net.SocketOption;
import java.nio.channels.ClosedChannelException;
import java.util.Objects;
import java.util.Set;

/** What Tern's channel classes share. */
final class Channels {
    /**
     * Closes the Tern socket of a channel that became unreachable without being closed, as the JDK closes the file
     * descriptor of an abandoned channel: its connection, rings and port come back to the stack.
     */
    static final Cleaner CLEANER = Cleaner.create();

    /**
     * How long a blocked call waits on the stack before it looks at its channel's state again (a half-close from
     * another thread, say); closing the channel or interrupting the thread ends the wait at once.
     */
    static final long WAIT_SLICE_NS = 20_000_000L;

    private Channels() {
    }

    static long sliceDeadline() {
        return System.nanoTime() + WAIT_SLICE_NS;
    }

    /** As the JDK's channels check an option before setting it. */
    static void checkOption(SocketOption<?> name, Object value, Set<SocketOption<?>> supported) {
        Objects.requireNonNull(name, "name");
        if (!supported.contains(name)) {
            throw new UnsupportedOperationException("'" + name + "' not supported");
        }
        if (value != null && !name.type().isInstance(value)) {
            throw new IllegalArgumentException("Invalid value '" + value + "'");
        }
    }

    static void checkSupported(SocketOption<?> name, Set<SocketOption<?>> supported) {
        Objects.requireNonNull(name, "name");
        if (!supported.contains(name)) {
            throw new UnsupportedOperationException("'" + name + "' not supported");
        }
    }

    static void ensureOpen(boolean open) throws ClosedChannelException {
        if (!open) {
            throw new ClosedChannelException();
        }
    }

    /** A buffer size for Tern's rings: the power of two at or above {@code requested}, within TCP's bounds. */
    static int ringSize(int requested) {
        final int clamped = Math.max(1024, Math.min(requested, 1 << 30));
        return Integer.bitCount(clamped) == 1 ? clamped : Integer.highestOneBit(clamped) << 1;
    }
}
