package dev.tern.cli;

import dev.tern.stack.NetStack;
import dev.tern.stack.SelectableSocket;
import dev.tern.stack.Selector;
import dev.tern.stack.TcpConnection;
import dev.tern.stack.TcpListener;
import dev.tern.stack.TernSocketException;
import dev.tern.tcp.TcpOptions;
import org.agrona.collections.ArrayListUtil;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.ArrayDeque;
import java.util.ArrayList;

/**
 * A TCP server polled from the command's loop: accepts every connection and hands each one's data to
 * {@link #serve}. Echo (RFC 862) and discard (RFC 863) are the two-line subclasses below; {@link HttpFileService}
 * is the third.
 *
 * <p>A poll serves only the connections whose readiness changed (a {@link Selector}, level-triggered as epoll: a
 * connection that stays ready is served again at the next poll), so its work follows the active connections, not the
 * open ones: a thousand idle keep-alive connections cost a poll nothing. A connection waits for {@link #READ} unless
 * its service asks otherwise ({@link #interest}: HTTP waits for room to write while a response is pending). Once a
 * second (on the stack's clock) every connection is served regardless, for what is measured by time rather than
 * signalled, such as HTTP's keep-alive timeout.
 *
 * <p>A service whose connections carry no state between bytes (echo, discard) lets a connection's rings go once
 * nothing has arrived on it for {@link #RELEASE_IDLE_NS} ({@link #releasesIdleBuffers}): thousands of open, quiet
 * connections then hold only their control blocks and count nothing against the stack's memory budget, as idle
 * persistent HTTP connections do. The next bytes bring the rings back.
 */
abstract class TcpService implements AutoCloseable {
    protected static final int READ = SelectableSocket.READ;
    protected static final int WRITE = SelectableSocket.WRITE;
    /** What {@link #serve} returns for a connection to reset rather than close (a client that stopped taking part). */
    protected static final int ABORT = -2;
    /** How often every connection is served, ready or not. */
    static final long SWEEP_INTERVAL_NS = 1_000_000_000L;
    /**
     * How long a connection stays quiet before its rings go back: nothing arriving (echo, discard), or waiting between
     * requests (HTTP).
     */
    static final long RELEASE_IDLE_NS = 1_000_000_000L;

    /** A served connection and its place in {@link #slots} (kept up to date when the last one moves into a gap). */
    private static final class Slot {
        TcpConnection connection;
        /** Its peer's address, as {@link #sourceLimit} counted it. */
        int source;
        int index;
        /** What the connection waits for ({@link #interest}). */
        int interest;
    }

    private final TcpListener listener;
    private final dev.tern.core.counters.CountersFile counters;
    private final ConnectionTraces traces;
    /** The stack's clock, read once per poll: virtual time under a simulation. */
    private final dev.tern.core.time.Clock clock;
    /** When the current poll began, on the stack's clock; what {@link #serve} measures idleness against. */
    protected long pollNs;
    private final ArrayList<Slot> slots = new ArrayList<>();
    /** Slots of closed connections, for the next ones. */
    private final ArrayDeque<Slot> freeSlots = new ArrayDeque<>();
    private final Selector ready;
    private final Selector.Handler serveReady = this::serveReady;
    private SourceLimit sourceLimit = SourceLimit.NONE;
    private long lastSweepNs;
    private int pollWork;
    /** Calls of {@link #serve} so far: what a poll's work grows with (for tests). */
    private long served;
    // Shared, not confined: tern serve --shards makes each shard's services on the main thread and polls them on the
    // shard's own.
    private final Arena arena = Arena.ofShared();
    protected final MemorySegment buffer = arena.allocate(64 * 1024);

    /** With default options, untraced (the memory link's in-process peer). */
    TcpService(NetStack stack, int port) throws TernSocketException {
        this(stack, port, TcpOptions.DEFAULT, new ConnectionTraces(null, true));
    }

    TcpService(NetStack stack, int port, TcpOptions options, ConnectionTraces traces) throws TernSocketException {
        this.listener = stack.listen(port, 128, options);
        this.counters = stack.counters();
        this.traces = traces;
        this.clock = stack.clock();
        this.lastSweepNs = clock.nanoTime();
        // Room for every connection the stack can hold: each is queued at most once.
        this.ready = new Selector(stack, stack.tcp().config().maxConnections());
    }

    /** Accepts, serves what is ready (everything once a second) and reaps finished connections; returns the work done. */
    final int poll() {
        pollNs = clock.nanoTime();
        pollWork = 0;
        try {
            TcpConnection accepted;
            while ((accepted = listener.accept()) != null) {
                final int source = accepted.remoteAddress();
                if (!sourceLimit.admit(source)) {
                    accepted.abort();   // its source holds its share already: a reset, before any byte is served
                    pollWork++;
                    continue;
                }
                final Slot slot = freeSlots.isEmpty() ? new Slot() : freeSlots.pollLast();
                slot.connection = accepted;
                slot.source = source;
                slot.index = slots.size();
                slots.add(slot);
                traces.attach(accepted);
                slot.interest = READ;
                ready.register(accepted, READ, slot);
                opened(accepted);
                pollWork++;
            }
        } catch (TernSocketException e) {
            // the listener closed under us: nothing more to accept
        }
        if (pollNs - lastSweepNs >= SWEEP_INTERVAL_NS) {
            lastSweepNs = pollNs;
            // Indexed: a finished connection's gap takes the last one, which is served next (no iterator per poll).
            final boolean releaseIdle = releasesIdleBuffers();
            for (int i = 0; i < slots.size(); ) {
                final Slot slot = slots.get(i);
                if (!serveSlot(slot)) {
                    if (releaseIdle) {
                        releaseIfIdle(slot.connection);
                    }
                    i++;
                }
            }
        } else {
            ready.selectNow(serveReady);
        }
        return pollWork;
    }

    private void serveReady(SelectableSocket socket, int readyOps, Object slot) {
        serveSlot((Slot) slot);
    }

    /** Serves one connection; returns whether it finished (and left {@link #slots}). */
    private boolean serveSlot(Slot slot) {
        final TcpConnection connection = slot.connection;
        served++;
        try {
            final int done = serve(connection);
            if (done >= 0) {
                pollWork += done;
                return false;
            }
            release(slot, done == ABORT);
        } catch (TernSocketException e) {
            release(slot, true);
        }
        return true;
    }

    /**
     * Gives back the rings of a connection on which nothing arrived for {@link #RELEASE_IDLE_NS}; the TCP layer keeps
     * them where anything waits in them or is unacknowledged, and the next sweep tries again.
     */
    private void releaseIfIdle(TcpConnection connection) {
        if (connection.holdsBuffers() && pollNs - connection.lastReceivedNs() >= RELEASE_IDLE_NS) {
            connection.releaseIdleBuffers();
        }
    }

    /** Closes (or resets) the slot's connection and frees the slot (its gap filled by the last, Agrona's way). */
    private void release(Slot slot, boolean abort) {
        final TcpConnection connection = slot.connection;
        ready.deregister(connection);
        closing(connection);
        traces.detach(connection);
        sourceLimit.release(slot.source);
        if (abort) {
            connection.abort();
        } else {
            connection.close();
        }
        ArrayListUtil.fastUnorderedRemove(slots, slot.index);
        if (slot.index < slots.size()) {
            slots.get(slot.index).index = slot.index;
        }
        slot.connection = null;
        freeSlots.addLast(slot);
    }

    /**
     * What {@code connection} waits for before it is served again: {@link #READ} (the default), {@link #WRITE}, or
     * both. Call when it changes, from {@link #serve} or {@link #opened}.
     */
    protected final void interest(TcpConnection connection, int ops) {
        final Slot slot = (Slot) connection.attachment();
        if (slot.interest != ops) {
            slot.interest = ops;
            ready.register(connection, ops, slot);
        }
    }

    /**
     * For a service that reads through a receive handler (no read reports the failure): a connection that ended with an
     * error (a reset, a timeout) throws it, so that {@link #poll} aborts it.
     */
    protected static void throwIfFailed(TcpConnection connection, String what) throws TernSocketException {
        if (connection.isEnded() && connection.error() != dev.tern.core.io.SocketError.NONE) {
            throw TernSocketException.of(connection.error(), what);
        }
    }

    /**
     * At most {@code max} connections from one source address at a time ({@code tern serve --max-per-source}); one
     * beyond it is reset as it is accepted. Before the first {@link #poll}.
     */
    final TcpService limitPerSource(int max) {
        sourceLimit = SourceLimit.of(max, counters.counter("serve.conn.source_limit"));
        return this;
    }

    /** Calls of {@link #serve} so far (for tests: the work of polls). */
    final long served() {
        return served;
    }

    /** Connections being served. */
    final int connections() {
        return slots.size();
    }

    /** A connection was accepted. */
    protected void opened(TcpConnection connection) {
    }

    /**
     * Whether the sweep lets a quiet connection's rings go ({@link #releaseIfIdle}): for services that keep nothing of
     * a connection's between its bytes. HTTP decides for itself, between requests, with its request buffer.
     */
    protected boolean releasesIdleBuffers() {
        return false;
    }

    /** A connection is about to be closed (finished, or failed): release what was kept for it. */
    protected void closing(TcpConnection connection) {
    }

    /**
     * Serves what arrived; returns the work done, -1 when the connection is finished and may be closed, or
     * {@link #ABORT} when it is to be reset.
     */
    protected abstract int serve(TcpConnection connection) throws TernSocketException;

    @Override
    public void close() {
        for (Slot slot : slots) {
            ready.deregister(slot.connection);
            closing(slot.connection);
            traces.detach(slot.connection);
            slot.connection.close();
        }
        listener.close();
        arena.close();
    }

    /**
     * TCP echo (RFC 862): what arrives goes back; the end of the stream closes. The bytes go back from where they
     * arrived (zero-copy receive): a receive handler writes them from the link's frame straight into the send ring,
     * one copy where reading and writing back took three (frame to receive ring, ring to buffer, buffer to send ring).
     * A client that does not read its echo slows the echo and loses nothing: the handler takes only what the send
     * ring can hold, the stack keeps the rest in the receive ring (its window closing), and the service offers it
     * again once the send ring has room.
     */
    static final class Echo extends TcpService {
        /** Stateless, so one for every connection (nothing captured, nothing allocated per segment). */
        private static final TcpConnection.ReceiveHandler ECHO = (connection, data, offset, length) -> {
            final int room = Math.min(length, connection.writableBytes());
            try {
                return room == 0 ? 0 : connection.write(data, offset, room);
            } catch (TernSocketException e) {
                return 0;   // the connection is gone; serve() finds it ended
            }
        };

        Echo(NetStack stack, int port) throws TernSocketException {
            super(stack, port);
        }

        Echo(NetStack stack, int port, TcpOptions options, ConnectionTraces traces) throws TernSocketException {
            super(stack, port, options, traces);
        }

        @Override
        protected void opened(TcpConnection connection) {
            try {
                connection.receiveHandler(ECHO);
            } catch (TernSocketException e) {
                // closed already: serve finds it ended
            }
        }

        @Override
        protected boolean releasesIdleBuffers() {
            return true;
        }

        @Override
        protected int serve(TcpConnection connection) throws TernSocketException {
            throwIfFailed(connection, "tcp echo");
            if (connection.isEndOfStream()) {
                connection.shutdownOutput();
                return connection.unsent() == 0 ? -1 : 0;
            }
            if (connection.available() > 0 && connection.writableBytes() > 0) {
                connection.resumeReceive();    // what the handler could not take: offered again (at once: our thread)
            }
            // Bytes still held wait for room in the send ring, not for more input (readiness is level-triggered).
            interest(connection, connection.available() > 0 ? WRITE : READ);
            return 0;
        }
    }

    /**
     * TCP discard (RFC 863): what arrives is dropped; the end of the stream closes. It takes the bytes through a
     * receive handler that takes everything and looks at nothing, so the stack copies none of them (zero-copy receive).
     */
    static final class Discard extends TcpService {
        private static final TcpConnection.ReceiveHandler DROP = (connection, data, offset, length) -> length;

        Discard(NetStack stack, int port) throws TernSocketException {
            super(stack, port);
        }

        Discard(NetStack stack, int port, TcpOptions options, ConnectionTraces traces) throws TernSocketException {
            super(stack, port, options, traces);
        }

        @Override
        protected void opened(TcpConnection connection) {
            try {
                connection.receiveHandler(DROP);
            } catch (TernSocketException e) {
                // closed already: serve finds it ended
            }
        }

        @Override
        protected boolean releasesIdleBuffers() {
            return true;
        }

        @Override
        protected int serve(TcpConnection connection) throws TernSocketException {
            throwIfFailed(connection, "tcp discard");
            return connection.isEndOfStream() || connection.isEnded() ? -1 : 0;
        }
    }
}
