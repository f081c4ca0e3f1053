package dev.tern.stack;

import dev.tern.core.io.ByteRing;
import dev.tern.core.io.SocketError;
import dev.tern.core.net.Ipv4Address;
import dev.tern.core.net.Ipv6Address;
import dev.tern.tcp.TcpError;
import dev.tern.tcp.TcpInfo;
import dev.tern.tcp.TcpLayer;
import dev.tern.tcp.TcpOptions;
import dev.tern.tcp.TcpReceiveHandler;
import dev.tern.tcp.TcpState;
import dev.tern.tcp.TcpTrace;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.ArrayList;
import java.util.Collection;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;

/**
 * A TCP connection on a {@link NetStack}, made by {@link NetStack#connect} or {@link TcpListener#accept}.
 *
 * <p>Data moves through the connection's two lock-free byte rings, shared with the stack: {@link #write} copies
 * into the send ring and {@link #read} copies out of the receive ring, from one application thread at a time,
 * without allocating. A write or read tells the stack (directly on its own thread, else through a queue) so that
 * it sends, or advertises the window the read opened.
 *
 * <p>{@link #read} returns -1 at the end of the stream (the peer closed its side, everything before is read).
 * Errors the network reports (reset, timeout, refused) are thrown as {@link TernSocketException}s by the next call.
 * {@link #shutdownOutput()} half-closes, {@link #close()} closes gracefully (or resets if unread data is left, as
 * Linux does), {@link #abort()} resets. The blocking forms wait with a timeout; {@link #inputStream()} and
 * {@link #outputStream()} wrap them for code that wants streams.
 *
 * <p>Zero-copy receive: with a {@link ReceiveHandler} set ({@link #receiveHandler}), received bytes go to the handler
 * on the stack's thread instead, in place in the link's frame when the handler keeps up; what it leaves waits in the
 * receive ring and is offered again, first, when more arrives or the application calls {@link #resumeReceive()}.
 * {@link #read} is then refused: the handler is the ring's only reader. See docs/DESIGN.md, "Zero-copy receive".
 */
public final class TcpConnection extends SelectableSocket implements AutoCloseable {
    private static final VarHandle NOTICES;
    private static final int NOTICE_SENDABLE = 1;
    private static final int NOTICE_CONSUMED = 2;
    private static final int NOTICE_DELIVER = 4;

    static {
        try {
            NOTICES = MethodHandles.lookup().findVarHandle(TcpConnection.class, "notices", int.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    private final TcpLayer tcp;
    private final TcpSockets sockets;
    private final int handle;
    /**
     * The connection's rings; both null while it idles without them ({@link #releaseIdleBuffers}) until the stack's
     * thread attaches them again (data arriving, or a write).
     */
    private volatile ByteRing sendRing;
    private volatile ByteRing receiveRing;
    /** The send ring's size: the room a write finds once the rings are back. */
    private final int sendCapacity;
    private volatile boolean established;
    private volatile boolean endOfStream;
    private volatile boolean ended;
    private volatile int error;
    private volatile boolean outputShut;
    private volatile boolean closed;
    @SuppressWarnings("unused") // through NOTICES
    private volatile int notices;
    private volatile ReceiveHandler receiveHandler;
    /** The TCP layer's view of {@link #receiveHandler}: made once, when a handler is first set. */
    private TcpReceiveHandler inPlace;
    /** Stack thread: true while the application's handler runs. */
    private boolean inReceiveHandler;

    /**
     * Takes received bytes where they lie (zero-copy receive), on the stack's thread, in the middle of segment input.
     * The view {@code [offset, offset + length)} of {@code data} is valid until the call returns (it is the link's
     * frame, or the receive ring). Returns how many of the bytes it took, from the first; the rest is offered again,
     * before anything newer. Inside, the handler may {@link #write} (the data leaves at the stack's next turn); it must
     * not close, abort, shut down or read the connection, nor change its handler (each throws
     * {@link IllegalStateException}, and an exception out of the handler is counted as {@code tcp.rx.handler_errors}
     * and taken as taking nothing). It must not block and should not allocate.
     */
    @FunctionalInterface
    public interface ReceiveHandler {
        int onReceive(TcpConnection connection, MemorySegment data, long offset, int length);
    }

    /** Stack thread: wraps a handle the TCP layer gave (connect or accept). */
    TcpConnection(NetStack stack, int handle, boolean established) {
        super(stack);
        this.tcp = stack.tcp();
        this.sockets = stack.tcpSockets();
        this.handle = handle;
        this.sendRing = tcp.sendBuffer(handle);
        this.receiveRing = tcp.receiveBuffer(handle);
        this.sendCapacity = sendRing == null ? 0 : sendRing.capacity();
        this.established = established;
        sockets.add(handle, this);
    }

    /** Stack thread: opens a connection; the SYN leaves at once. */
    static TcpConnection open(NetStack stack, int address, int port, int localPort, TcpOptions options)
        throws TernSocketException {
        final Object result = stack.call(() -> {
            final int handle = stack.tcp().connect(address, port, localPort, options, stack.tcpSockets(),
                stack.clock().nanoTime());
            return handle < 0 ? (Object) Integer.valueOf(-handle) : new TcpConnection(stack, handle, false);
        });
        if (result instanceof Integer failure) {
            throw TernSocketException.of(TcpSockets.socketError(failure), "tcp connect " + Ipv4Address.format(address) + ":" + port);
        }
        return (TcpConnection) result;
    }

    /** Stack thread: opens a connection to an IPv6 peer; the SYN leaves at once. */
    static TcpConnection open6(NetStack stack, Ipv6Address address, int port, int localPort, TcpOptions options)
        throws TernSocketException {
        if (stack.ipv6() == null) {
            throw new TernSocketException(SocketError.ADDRESS_NOT_AVAILABLE, "tcp connect [" + address + "]:" + port
                + ": this stack has no IPv6 (NetStack.Builder.ipv6, or --ip6 on the command line)");
        }
        final Object result = stack.call(() -> {
            final int handle = stack.tcp().connect6(address.high(), address.low(), port, localPort, options,
                stack.tcpSockets(), stack.clock().nanoTime());
            return handle < 0 ? (Object) Integer.valueOf(-handle) : new TcpConnection(stack, handle, false);
        });
        if (result instanceof Integer failure) {
            throw TernSocketException.of(TcpSockets.socketError(failure), "tcp connect [" + address + "]:" + port);
        }
        return (TcpConnection) result;
    }

    // ------------------------------------------------------------------------------------------ data

    /** Waits up to {@code timeoutNs} for the handshake; throws if it failed (refused, timed out, unreachable). */
    public void awaitConnected(long timeoutNs) throws TernSocketException {
        final long deadline = System.nanoTime() + timeoutNs;
        while (!established) {
            throwIfEnded("tcp connect");
            if (await(WRITE, deadline) == 0 && !established) {
                throw TernSocketException.of(SocketError.TIMED_OUT, "tcp connect to " + describePeer());
            }
        }
    }

    public boolean isConnected() {
        return established && !ended;
    }

    /** True once the connection can carry nothing more (closed by both sides, reset, refused, timed out). */
    public boolean isEnded() {
        return ended;
    }

    /** Why the connection failed, as a {@code SocketError} code; NONE while it lives or after a clean close. */
    public int error() {
        return error;
    }

    /**
     * Copies up to {@code length} bytes into the send ring; returns how many fit (0 when it is full now). Throws
     * once the connection failed or after {@link #shutdownOutput()}.
     */
    public int write(MemorySegment data, long offset, int length) throws TernSocketException {
        if (outputShut || closed) {
            throw new TernSocketException(SocketError.NOT_CONNECTED, "tcp write after shutdown or close");
        }
        throwIfFailed("tcp write");
        ByteRing ring = sendRing;
        if (ring == null) {
            ring = attachRings();
            if (ring == null) {
                throwIfEnded("tcp write");
                return 0;
            }
        }
        final int written = ring.write(data, offset, length);
        if (written > 0) {
            notice(NOTICE_SENDABLE);
        }
        return written;
    }

    /** Writes all {@code length} bytes, waiting up to {@code timeoutNs} in all for room; returns how many went in. */
    public int write(MemorySegment data, long offset, int length, long timeoutNs) throws TernSocketException {
        final long deadline = System.nanoTime() + timeoutNs;
        int done = 0;
        while (done < length) {
            done += write(data, offset + done, length - done);
            if (done == length) {
                break;
            }
            final int ready = await(WRITE, deadline);
            if (ready == 0 && writableBytes() == 0) {
                break; // timed out with the ring still full
            }
            if ((ready & (WRITE | ERROR)) == 0 && ready != 0) {
                throwIfEnded("tcp write"); // a hang-up: the next write throws too, but say why here
            }
        }
        return done;
    }

    /**
     * Copies up to {@code capacity} received bytes; returns how many, 0 when none is waiting now, or -1 at the end
     * of the stream. Throws if the connection was reset or timed out.
     */
    public int read(MemorySegment destination, long offset, int capacity) throws TernSocketException {
        if (closed) {
            throw new TernSocketException(SocketError.NOT_CONNECTED, "tcp read after close");
        }
        if (receiveHandler != null) {
            throw new IllegalStateException("tcp read with a receive handler set: the handler gets the data");
        }
        final ByteRing ring = receiveRing;
        final int count = ring == null ? 0 : ring.read(destination, offset, capacity);
        if (count > 0) {
            notice(NOTICE_CONSUMED);
            return count;
        }
        throwIfFailed("tcp read");
        // The FIN follows all data into the ring: check for data once more after seeing it.
        if (endOfStream && waiting() == 0) {
            return -1;
        }
        return 0;
    }

    /** Like {@link #read(MemorySegment, long, int)}, waiting up to {@code timeoutNs}; 0 on timeout. */
    public int read(MemorySegment destination, long offset, int capacity, long timeoutNs) throws TernSocketException {
        final long deadline = System.nanoTime() + timeoutNs;
        int count;
        while ((count = read(destination, offset, capacity)) == 0) {
            if (await(READ, deadline) == 0) {
                return 0;
            }
        }
        return count;
    }

    /** Bytes waiting to be read (with a receive handler: bytes it left, waiting to be offered again). */
    public int available() {
        return closed ? 0 : waiting();
    }

    /** Bytes in the receive ring; 0 without one (idle, released). */
    private int waiting() {
        final ByteRing ring = receiveRing;
        return ring == null ? 0 : ring.available();
    }

    /**
     * Lets go of the connection's rings while it idles, as a server does with a persistent connection between
     * requests: when nothing waits to be read, everything written was acknowledged and no FIN is queued, the rings go
     * back to the stack's pool (their pages to the system beyond its warm share) and the connection keeps only its
     * control block. Data that arrives later, or a {@link #write}, attaches rings again. Returns true when the rings
     * went back, false when the connection is busy. Use from the thread that reads and writes, while it does neither;
     * a round trip to the stack's thread from any other. With a {@link ReceiveHandler} the stack's thread is the one
     * that reads (the handler runs there), so only a call from it lets go; elsewhere this returns false. Cold path.
     */
    public boolean releaseIdleBuffers() {
        return letGoIfIdle() && releaseLetGo(List.of(this)) == 1;
    }

    /**
     * The owner's half of {@link #releaseIdleBuffers}, for an owner that lets many connections go at once: if its
     * rings look idle (nothing unread, nothing unacknowledged) the connection stops using them, and returns true;
     * {@link #releaseLetGo} then hands them back to the stack, many connections in one round trip. Call it from the
     * thread that reads and writes, while it does neither: with a receive handler, the stack's own thread only,
     * outside the handler (elsewhere this returns false). Until the release, the connection behaves as one without
     * rings: a read finds nothing, a write or arriving data takes the rings back (and the release then leaves them).
     */
    public boolean letGoIfIdle() {
        final ByteRing send = sendRing;
        final ByteRing receive = receiveRing;
        if (closed || inReceiveHandler || (receiveHandler != null && !stack.isOwnerThread()) || send == null
            || receive == null || send.available() != 0 || receive.available() != 0) {
            return false;
        }
        sendRing = null;
        receiveRing = null;
        return true;
    }

    /**
     * The stack's half of {@link #releaseIdleBuffers}: the rings of connections that {@link #letGoIfIdle let them go}
     * go back to their stacks, one round trip per stack for all of them. A connection that took its rings back
     * meanwhile keeps them; one the TCP layer finds busy after all (data arrived out of order, say) takes them back.
     * Returns how many gave their rings back. Any thread; cold path.
     */
    public static int releaseLetGo(Collection<TcpConnection> connections) {
        final Map<NetStack, List<TcpConnection>> byStack = new IdentityHashMap<>();
        for (TcpConnection c : connections) {
            byStack.computeIfAbsent(c.stack, s -> new ArrayList<>()).add(c);
        }
        int released = 0;
        for (Map.Entry<NetStack, List<TcpConnection>> stackAndConnections : byStack.entrySet()) {
            final List<TcpConnection> ofStack = stackAndConnections.getValue();
            released += stackAndConnections.getKey().call(() -> {
                int n = 0;
                for (TcpConnection c : ofStack) {
                    if (c.releaseHere()) {
                        n++;
                    }
                }
                return n;
            });
        }
        return released;
    }

    /** Stack thread: the TCP layer takes back rings the owner let go, unless it took them back or they are busy. */
    private boolean releaseHere() {
        if (closed || sendRing != null) {
            return false;
        }
        if (tcp.releaseIdleBuffers(handle)) {
            return true;
        }
        // Busy after all: the owner uses them again. Data may have arrived after the owner looked and before it let go,
        // and its readiness gone to a read that found no ring: signal again, now that the bytes can be read.
        attachRingsHere();
        if (waiting() > 0) {
            signal();
        }
        return false;
    }

    /** Whether the connection holds its rings now (false after {@link #releaseIdleBuffers} until they are back). */
    public boolean holdsBuffers() {
        return sendRing != null;
    }

    /** Attaches the rings again (on the stack's thread: a round trip from any other); the send ring, or null. */
    private ByteRing attachRings() {
        stack.call(() -> {
            attachRingsHere();
            return 0;
        });
        return sendRing;
    }

    /** Stack thread: takes the rings the TCP layer has for the connection (attaching them if it has none). */
    private void attachRingsHere() {
        if (!closed && sendRing == null) {
            final ByteRing send = tcp.sendBuffer(handle);
            receiveRing = tcp.receiveBuffer(handle);
            sendRing = send;
        }
    }

    // ------------------------------------------------------------------------------------------ zero-copy receive

    /**
     * Sets the connection's {@link ReceiveHandler} (null removes it: {@link #read} works again). Bytes already waiting
     * are offered to it at once, on the stack's thread, before this returns. Use from the thread that reads.
     */
    public void receiveHandler(ReceiveHandler handler) throws TernSocketException {
        refuseInsideHandler("change the receive handler");
        if (closed) {
            throw new TernSocketException(SocketError.NOT_CONNECTED, "tcp receive handler after close");
        }
        check(stack.call(() -> {
            if (inPlace == null) {
                inPlace = this::deliverInPlace;
            }
            receiveHandler = handler;
            return tcp.receiveHandler(handle, handler == null ? null : inPlace, stack.clock().nanoTime());
        }), "tcp receive handler");
    }

    /**
     * Any thread: the handler can take more. The stack offers it what it left (at once on the stack's thread, else at
     * its next turn) and advertises the window that opens. Nothing happens without a handler.
     */
    public void resumeReceive() {
        if (receiveHandler != null && !closed) {
            notice(NOTICE_DELIVER);
        }
    }

    /**
     * Held-frame zero-copy receive, from inside the {@link ReceiveHandler} only: keeps the bytes being offered readable
     * after the handler returns (the same {@code data}, {@code offset} and {@code length}), in the link's frame, until
     * {@link NetStack#releaseHeld} of the hold returned here, from any thread. The hold takes all the bytes offered
     * (the handler's return value no longer matters); until they are released they keep their room in the receive
     * window, so the peer slows down rather than the application holding more than its receive buffer. Returns -1
     * where the bytes cannot be held (the view then lives during the call only): they are offered from the receive
     * ring (left there before, or filling a hole), or the link lends no frames (AF_PACKET) or no more now (a quarter
     * of its receive buffers at most). See docs/DESIGN.md, "Zero-copy receive".
     */
    public long holdReceived() {
        if (!inReceiveHandler || !stack.isOwnerThread()) {
            return -1;
        }
        return tcp.holdOffered(handle);
    }

    /** True once the peer closed its side and every byte before its FIN was read or taken by the handler. */
    public boolean isEndOfStream() {
        return endOfStream && waiting() == 0;
    }

    private int deliverInPlace(int connection, MemorySegment data, long offset, int length) {
        final ReceiveHandler handler = receiveHandler;
        if (handler == null) {
            return 0;
        }
        inReceiveHandler = true;
        try {
            return handler.onReceive(this, data, offset, length);
        } finally {
            inReceiveHandler = false;
        }
    }

    private void refuseInsideHandler(String what) {
        if (inReceiveHandler && stack.isOwnerThread()) {
            throw new IllegalStateException("cannot " + what + " from inside a receive handler: return first");
        }
    }

    /** Room in the send ring: a {@link #write} of this many bytes fits now. */
    public int writableBytes() {
        if (closed) {
            return 0;
        }
        final ByteRing ring = sendRing;
        return ring == null ? sendCapacity : ring.freeSpace();
    }

    /** Bytes written but not yet acknowledged by the peer (still in the send ring). */
    public int unsent() {
        if (closed) {
            return 0;
        }
        final ByteRing ring = sendRing;
        return ring == null ? 0 : ring.available();
    }

    // ------------------------------------------------------------------------------------------ control

    /** Half-close: a FIN follows the data written so far (shutdown(SHUT_WR)); reading goes on. */
    public void shutdownOutput() {
        refuseInsideHandler("shut the connection down");
        if (outputShut || closed) {
            return;
        }
        outputShut = true;
        stack.call(() -> {
            applyNotices(stack.clock().nanoTime());
            tcp.shutdownOutput(handle, stack.clock().nanoTime());
            return 0;
        });
    }

    /**
     * Closes gracefully and waits, for at most {@code timeoutNs}, until the peer has acknowledged everything written
     * and the FIN ({@code SO_LINGER} above 0 on a blocking socket, as Linux's close waits); returns whether it did. On
     * timeout the connection goes on closing in the background, as Linux's does. Checks every millisecond.
     */
    public boolean closeAndLinger(long timeoutNs) {
        refuseInsideHandler("close the connection");
        shutdownOutput();
        final long deadline = System.nanoTime() + timeoutNs;
        boolean acknowledged;
        while (!(acknowledged = isEnded() || stack.call(() -> tcp.outputAcknowledged(handle) ? 1 : 0) == 1)
            && System.nanoTime() - deadline < 0) {
            java.util.concurrent.locks.LockSupport.parkNanos(1_000_000L);
        }
        close();
        return acknowledged;
    }

    /** Closes gracefully (a FIN after the data written), or with a reset if received data was left unread. */
    @Override
    public void close() {
        release(false);
    }

    /** Resets the connection at once; data not yet sent is lost. */
    public void abort() {
        release(true);
    }

    private void release(boolean abort) {
        refuseInsideHandler(abort ? "abort the connection" : "close the connection");
        if (closed) {
            return;
        }
        closed = true;
        if (stack.isClosed()) {
            return;   // the stack reset the connection and freed everything as it closed (a channel cleaned up late)
        }
        try {
            stack.call(() -> {
                final long now = stack.clock().nanoTime();
                if (abort) {
                    tcp.abort(handle, now);
                } else {
                    applyNotices(now);
                    tcp.close(handle, now);
                }
                sockets.remove(handle);
                return 0;
            });
        } catch (IllegalStateException e) {
            if (!stack.isClosed()) {
                throw e;
            }
            // the stack closed while the call waited: as above, nothing is left to release
        }
        final Selector current = selector;
        if (current != null) {
            current.deregister(this);
        }
    }

    /** Disables Nagle's algorithm (TCP_NODELAY): small writes leave at once. */
    public void noDelay(boolean enabled) throws TernSocketException {
        check(stack.call(() -> tcp.noDelay(handle, enabled, stack.clock().nanoTime())), "tcp no-delay");
    }

    /** Keepalive probes after {@code idleNs} of silence, every {@code intervalNs}, giving up after {@code probes}. */
    public void keepalive(boolean enabled, long idleNs, long intervalNs, int probes) throws TernSocketException {
        check(stack.call(() -> tcp.keepalive(handle, enabled, idleNs, intervalNs, probes, stack.clock().nanoTime())),
            "tcp keepalive");
    }

    /**
     * TCP_USER_TIMEOUT (RFC 5482, Linux's meaning): the connection ends with {@code TIMED_OUT} once sent data stayed
     * unacknowledged, or a zero window was probed, for {@code milliseconds}; 0 goes back to the retry count.
     */
    public void userTimeout(int milliseconds) throws TernSocketException {
        check(stack.call(() -> tcp.socketOptions().userTimeout(handle, milliseconds)), "tcp user timeout");
    }

    /**
     * TCP_NOTSENT_LOWAT: the mark of unsent bytes below which the connection counts as writable for
     * {@link dev.tern.tcp.TcpSocketOptions#belowNotsentLowat}; 0 goes back to the stack's default.
     */
    public void notsentLowat(int bytes) throws TernSocketException {
        check(stack.call(() -> tcp.socketOptions().notsentLowat(handle, bytes)), "tcp notsent lowat");
    }

    /**
     * MSG_EOR: the bytes written so far end a record; no segment carries them with bytes written after (TCP.md,
     * "MSG_EOR"). Throws when too many record ends wait to be sent ({@code NO_BUFFER}: write on once some went).
     */
    public void endRecord() throws TernSocketException {
        check(stack.call(() -> tcp.socketOptions().endRecord(handle)), "tcp end of record");
    }

    /** Bytes written and not sent yet (TCP_INFO's notsent_bytes). */
    public int notsentBytes() {
        return stack.call(() -> tcp.socketOptions().notsentBytes(handle));
    }

    /**
     * TCP_MAXSEG on the open connection: the MSS used from now on is at most {@code bytes} (88 .. 32767; 0 removes
     * the bound). The MSS offered in the SYN comes from {@link dev.tern.tcp.TcpOptions#withMaxSegment}.
     */
    public void maxSegment(int bytes) throws TernSocketException {
        check(stack.call(() -> tcp.socketOptions().maxSegment(handle, bytes)), "tcp max segment");
    }

    /** Linux's TCP_MAXSEG value: the MSS in use less the timestamp option (before the handshake the bound, or 536). */
    public int maxSegment() {
        return stack.call(() -> Math.max(0, tcp.socketOptions().maxSegment(handle)));
    }

    /** Switches congestion control by name ("cubic", "newreno", "none", "bbr"). */
    public void congestionControl(String name) throws TernSocketException {
        check(stack.call(() -> tcp.congestionControl(handle, name, stack.clock().nanoTime())), "tcp congestion control " + name);
    }

    /** Switches loss detection by name ("rack", "dupack"); it applies when the peer does SACK. */
    public void lossDetection(String name) throws TernSocketException {
        check(stack.call(() -> tcp.lossDetection(handle, name)), "tcp loss detection " + name);
    }

    /** Switches loss recovery by name ("prr", "rfc6675", "newreno") from the next recovery; with SACK only. */
    public void lossRecovery(String name) throws TernSocketException {
        check(stack.call(() -> tcp.lossRecovery(handle, name)), "tcp loss recovery " + name);
    }

    /**
     * Traces the sender into {@code trace} from now on (a record per ACK: cwnd, pipe, RTT, ...; see {@link TcpTrace}),
     * or stops with null. The caller drains and closes the trace, after closing the connection.
     */
    public void trace(TcpTrace trace) throws TernSocketException {
        check(stack.call(() -> tcp.trace(handle, trace)), "tcp trace");
    }

    /** The connection's state, windows, RTT and statistics as one value (for tools; allocates). */
    public TcpInfo info() {
        return stack.call(() -> tcp.info(handle));
    }

    private static void check(int result, String what) throws TernSocketException {
        if (result < 0) {
            throw TernSocketException.of(TcpSockets.socketError(-result), what);
        }
    }

    /** The TCP state ("ESTABLISHED", ...), for tools. */
    public String state() {
        return closed ? "CLOSED (released)" : TcpState.name(stack.call(() -> tcp.state(handle)));
    }

    public int localPort() {
        return stack.call(() -> tcp.localPort(handle));
    }

    /** The peer's IPv4 address; over IPv6 a 32-bit fold of its address (see {@link #remoteAddress6}). */
    public int remoteAddress() {
        return stack.call(() -> tcp.remoteAddress(handle));
    }

    /** Whether the connection runs over IPv6. */
    public boolean ipv6() {
        return stack.call(() -> tcp.ipv6(handle));
    }

    /** The peer's IPv6 address, or null for an IPv4 connection. */
    public Ipv6Address remoteAddress6() {
        return stack.call(() -> tcp.ipv6(handle)
            ? new Ipv6Address(tcp.remoteAddressHigh(handle), tcp.remoteAddressLow(handle)) : null);
    }

    /** Our IPv6 address on the connection, or null for an IPv4 connection. */
    public Ipv6Address localAddress6() {
        return stack.call(() -> tcp.ipv6(handle)
            ? new Ipv6Address(tcp.localAddressHigh(handle), tcp.localAddressLow(handle)) : null);
    }

    /** The peer as text: {@code a.b.c.d:port} or {@code [v6]:port}. */
    public String describeRemote() {
        final Ipv6Address six = remoteAddress6();
        return (six != null ? "[" + six + "]" : Ipv4Address.format(remoteAddress())) + ":" + remotePort();
    }

    public int remotePort() {
        return stack.call(() -> tcp.remotePort(handle));
    }

    /**
     * When a segment last arrived on the connection, on the stack's clock ({@link NetStack#clock}): data, an
     * acknowledgement or a keep-alive; what an owner measures idleness by when a receive handler takes its data.
     */
    public long lastReceivedNs() {
        if (closed) {
            return 0;
        }
        // On the owner's thread without stack.call's lambda: a service's sweep asks this of every connection.
        return stack.isOwnerThread() ? tcp.lastReceiveNs(handle) : stack.call(() -> tcp.lastReceiveNs(handle));
    }

    /** Segments this connection retransmitted. */
    public long retransmits() {
        return stack.call(() -> tcp.retransmits(handle));
    }

    private String describePeer() {
        return closed ? "peer" : describeRemote();
    }

    // ------------------------------------------------------------------------------------------ readiness

    @Override
    public int readyOps() {
        if (closed) {
            return 0;
        }
        int ops = 0;
        if (receiveHandler == null ? waiting() > 0 || endOfStream : isEndOfStream()) {
            ops |= READ;
        }
        if (established && !ended && !outputShut && writableBytes() > 0) {
            ops |= WRITE;
        }
        if (error != SocketError.NONE) {
            ops |= ERROR | READ | WRITE;
        }
        // As POLLHUP: nothing more can move either way. The peer's FIN alone is READ (a read returns -1); a writer
        // in CLOSE-WAIT must still wait for room, so it cannot be woken by a hang-up that stays set for good.
        if (ended || (endOfStream && outputShut)) {
            ops |= HANGUP;
        }
        return ops;
    }

    private void throwIfFailed(String what) throws TernSocketException {
        final int failure = error;
        if (failure != SocketError.NONE) {
            throw TernSocketException.of(failure, what);
        }
    }

    private void throwIfEnded(String what) throws TernSocketException {
        throwIfFailed(what);
        if (ended) {
            throw new TernSocketException(SocketError.NOT_CONNECTED, what + ": connection closed");
        }
    }

    // ------------------------------------------------------------------------------------------ stack side

    private void notice(int kind) {
        final int before = (int) NOTICES.getAndBitwiseOr(this, kind);
        if (before == 0) {
            if (stack.isOwnerThread() && !inReceiveHandler) {
                applyNotices(stack.clock().nanoTime());
            } else {
                sockets.notice(this);
            }
        }
    }

    /** Stack thread: tells the TCP layer what the application did since the last notice. */
    void applyNotices(long nowNs) {
        final int kinds = (int) NOTICES.getAndSet(this, 0);
        if (closed && kinds == 0) {
            return;
        }
        if ((kinds & NOTICE_SENDABLE) != 0) {
            tcp.sendable(handle, nowNs);
        }
        if ((kinds & NOTICE_CONSUMED) != 0) {
            tcp.consumed(handle, nowNs);
        }
        if ((kinds & NOTICE_DELIVER) != 0) {
            tcp.deliverReceived(handle, nowNs);
        }
    }

    void onEstablished() {
        established = true;
        signal();
    }

    void onReadable() {
        // Data (or a FIN) came to a connection that let its rings go: the TCP layer attached them to store it.
        if (sendRing == null && tcp.ringsAttached(handle)) {
            attachRingsHere();
        }
        if (tcp.receiveShutdown(handle)) {
            endOfStream = true;
        }
        signal();
    }

    void onWritable() {
        signal();
    }

    void onClosed(int reason) {
        if (reason != TcpError.NONE) {
            error = TcpSockets.socketError(reason);
        }
        if (tcp.receiveShutdown(handle)) {
            endOfStream = true;
        }
        ended = true;
        signal();
    }

    // ------------------------------------------------------------------------------------------ streams

    /** A blocking {@link InputStream} over {@link #read} (waits without limit); -1 at the end of the stream. */
    public InputStream inputStream() {
        return new InputStream() {
            private final byte[] one = new byte[1];

            @Override
            public int read() throws IOException {
                final int n = read(one, 0, 1);
                return n < 0 ? -1 : one[0] & 0xFF;
            }

            @Override
            public int read(byte[] buffer, int offset, int length) throws IOException {
                if (length == 0) {
                    return 0;
                }
                int n;
                while ((n = TcpConnection.this.read(MemorySegment.ofArray(buffer), offset, length, Long.MAX_VALUE / 4)) == 0) {
                    Thread.onSpinWait();
                }
                return n;
            }

            @Override
            public int available() {
                return TcpConnection.this.available();
            }
        };
    }

    /** A blocking {@link OutputStream} over {@link #write}; {@code close()} half-closes (shutdownOutput). */
    public OutputStream outputStream() {
        return new OutputStream() {
            @Override
            public void write(int b) throws IOException {
                write(new byte[] {(byte) b}, 0, 1);
            }

            @Override
            public void write(byte[] buffer, int offset, int length) throws IOException {
                int done = 0;
                while (done < length) {
                    done += TcpConnection.this.write(MemorySegment.ofArray(buffer), offset + done, length - done,
                        Long.MAX_VALUE / 4);
                }
            }

            @Override
            public void close() {
                shutdownOutput();
            }
        };
    }
}
