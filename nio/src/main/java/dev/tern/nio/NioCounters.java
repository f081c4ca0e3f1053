package dev.tern.nio;

import dev.tern.core.sys.ShutGate;
import dev.tern.stack.NetStack;
import org.agrona.concurrent.status.AtomicCounter;

/**
 * The nio module's counters, in the stack's counters file next to the layers' ({@code tern stat} shows them under
 * the stack's name). Opened minus closed is what the program holds now: a program that abandons channels without
 * closing them shows here whether their stack resources came back ({@code nio.*.abandoned} counts those a cleaner
 * closed after the channel became unreachable).
 *
 * <p>Several application threads update them, so they count with {@code getAndAdd} (a locked add), not the
 * single-writer {@code incrementRelease} the layers use; channel opens and closes are not the data path. They go
 * through {@link #add} and {@link #proposeMax}, which write nothing once {@link #shut}: a channel can close (on the
 * program's thread, or its cleaner's) after the provider closed its stack, whose counters file is then unmapped, and a
 * write there would crash the JVM (a Netty server stopped with SIGTERM under {@code tern exec} did, in
 * {@code AtomicCounter.increment} from {@code TernSocketChannel.Closer}).
 */
final class NioCounters {
    private final ShutGate gate = new ShutGate();
    final AtomicCounter tcpOpened;
    final AtomicCounter tcpClosed;
    final AtomicCounter tcpAbandoned;
    final AtomicCounter listenersOpened;
    final AtomicCounter listenersClosed;
    final AtomicCounter udpOpened;
    final AtomicCounter udpClosed;
    final AtomicCounter udpAbandoned;
    final AtomicCounter kernelChannels;
    /** Idle sweeps of the provider's selectors, the time they took in all, and the longest. */
    final AtomicCounter idleSweeps;
    final AtomicCounter idleSweepNs;
    final AtomicCounter idleSweepMaxNs;

    private NioCounters(NetStack stack) {
        final var file = stack.counters();
        tcpOpened = file.counter("nio.tcp.opened");
        tcpClosed = file.counter("nio.tcp.closed");
        tcpAbandoned = file.counter("nio.tcp.abandoned");
        listenersOpened = file.counter("nio.listeners.opened");
        listenersClosed = file.counter("nio.listeners.closed");
        udpOpened = file.counter("nio.udp.opened");
        udpClosed = file.counter("nio.udp.closed");
        udpAbandoned = file.counter("nio.udp.abandoned");
        kernelChannels = file.counter("nio.kernel.channels");
        idleSweeps = file.counter("nio.idle.sweeps");
        idleSweepNs = file.counter("nio.idle.sweep_ns");
        idleSweepMaxNs = file.counter("nio.idle.sweep_max_ns");
    }

    /** Adds {@code delta} to {@code counter} (one of these), unless the counters are shut. Any thread. */
    void add(AtomicCounter counter, long delta) {
        if (gate.enter()) {
            try {
                counter.getAndAdd(delta);
            } finally {
                gate.exit();
            }
        }
    }

    /** Raises {@code counter} (one of these) to {@code value} if that is more, unless the counters are shut. */
    void proposeMax(AtomicCounter counter, long value) {
        if (gate.enter()) {
            try {
                counter.proposeMax(value);
            } finally {
                gate.exit();
            }
        }
    }

    /** No write after this returns: the stack, and its counters file with it, may close. */
    void shut() {
        gate.shut();
    }

    /** Allocates the counters on the stack's thread (counter allocation is not thread-safe). */
    static NioCounters register(NetStack stack) {
        return stack.call(() -> new NioCounters(stack));
    }
}
