package dev.tern.stack;

import dev.tern.core.io.ByteRing;
import dev.tern.core.io.SocketError;
import dev.tern.core.net.Ipv4Address;
import dev.tern.core.net.Ipv6Address;
import dev.tern.ethernet.link.UdpPortOwners;
import dev.tern.igmp.IgmpLayer;
import dev.tern.udp.DatagramRecords;
import dev.tern.udp.UdpEvents;
import dev.tern.udp.UdpLayer;
import dev.tern.udp.UdpReceiveHandler;
import dev.tern.udp.wire.UdpHeader;

import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;

/**
 * A UDP socket on a {@link NetStack}.
 *
 * <p>Data moves through two lock-free rings shared with the stack: {@link #send}/{@link #sendTo} append a datagram
 * to the send ring (the stack sends it on its next poll), {@link #receive} takes one from the receive ring with
 * its source ({@link #lastSourceAddress()}, {@link #lastSourcePort()}). Neither call allocates. Use a socket's data
 * calls from one application thread at a time; that thread may or may not be the stack's.
 *
 * <p>Control calls (bind, connect, options, join, close) run on the stack's thread: directly when called from it
 * (or when no {@link StackRunner} drives the stack), else handed over and waited for.
 *
 * <p>Errors reported by the network (ICMP port unreachable to a connected socket, a datagram the stack could not
 * send) are thrown by the next call, as on Linux, as a {@link TernSocketException} subclass.
 *
 * <p>Zero-copy receive: with a {@link ReceiveHandler} set ({@link #receiveHandler}), each datagram goes to the handler
 * on the stack's thread, in place in the link's frame when nothing older is queued; one it declines is queued and
 * offered again, first, before the next datagram or when the application calls {@link #resumeReceive()}.
 * {@link #receive} is then refused. See docs/DESIGN.md, "Zero-copy receive".
 *
 * <p>Dual stack ({@link NetStack#openUdpDualStack}): an IPv6 socket that, bound to the IPv6 wildcard, also takes the
 * IPv4 calls ({@link #sendTo(int, int, MemorySegment, long, int)}, {@link #connect(int, int)}, {@link #join(int)})
 * and receives IPv4 datagrams, each with its IPv4 source ({@link #lastSourceIpv6()} false). An IPv4-mapped address
 * ({@code ::ffff:a.b.c.d}) given to it is IPv4. As the JDK's sockets, which are dual-stack unless bound to an
 * address (docs/NIO.md, "IPv6 and the JDK's dual stack").
 */
public final class UdpSocket extends SelectableSocket implements UdpEvents, AutoCloseable {
    private static final VarHandle OUTPUT_QUEUED;
    /** Room for a full-size Ethernet datagram: below this the socket does not report itself writable. */
    private static final int WRITABLE_THRESHOLD = DatagramRecords.recordLength(1472);

    static {
        try {
            OUTPUT_QUEUED = MethodHandles.lookup().findVarHandle(UdpSocket.class, "outputQueued", int.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    private final UdpLayer udp;
    /**
     * An IPv6 socket ({@link NetStack#openUdp6}): 128-bit addresses, IPv6 datagrams only. Both flags fall when a
     * dual-stack socket binds an IPv4 address.
     */
    private volatile boolean ipv6;
    /** An IPv6 socket that takes IPv4 too ({@link NetStack#openUdpDualStack}). */
    private volatile boolean dualStack;
    private final int handle;
    private final ByteRing receiveRing;
    private final ByteRing sendRing;
    private final DatagramRecords records = new DatagramRecords();
    @SuppressWarnings("unused") // through OUTPUT_QUEUED
    private volatile int outputQueued;
    private volatile boolean closed;
    private volatile boolean broadcastEnabled;
    private volatile boolean multicastLoop = true;
    private volatile int multicastTtl = 1;
    private int lastSourceAddress;
    private long lastSourceHigh;
    private long lastSourceLow;
    private int lastSourcePort;
    private boolean lastSourceIpv6;
    private int lastKind;
    private int lastLength;
    private volatile ReceiveHandler receiveHandler;
    /** The UDP layer's view of {@link #receiveHandler}: made once, when a handler is first set. */
    private UdpReceiveHandler inPlace;
    /** Stack thread: true while the application's handler runs. */
    private boolean inReceiveHandler;
    private volatile boolean resumeRequested;
    /** The port this socket claimed for its shard ({@link #steerPortHere}), or 0. */
    private volatile int claimedPort;

    /**
     * Takes one received datagram where it lies (zero-copy receive), on the stack's thread, in the middle of input.
     * The view {@code [offset, offset + length)} of {@code data} is valid until the call returns. Returns true when it
     * took the datagram, false to have it queued and offered again later, before newer ones. Inside, the handler may
     * send; it must not close the socket, receive from it or change its handler (each throws
     * {@link IllegalStateException}; an exception out of the handler is counted as {@code udp.rx.handler_errors} and
     * the datagram queued). It must not block and should not allocate.
     */
    @FunctionalInterface
    public interface ReceiveHandler {
        boolean onDatagram(UdpSocket socket, int sourceAddress, int sourcePort, MemorySegment data, long offset,
                           int length);
    }

    /** Runs on the stack thread: opens the protocol socket with this object as its event sink. */
    private UdpSocket(NetStack stack, boolean ipv6, boolean dualStack) {
        super(stack);
        this.udp = stack.udp();
        this.ipv6 = ipv6;
        this.dualStack = dualStack;
        this.handle = dualStack ? udp.openDualStack(this) : ipv6 ? udp.open6(this) : udp.open(this);
        this.receiveRing = handle >= 0 ? udp.receiveRing(handle) : null;
        this.sendRing = handle >= 0 ? udp.sendRing(handle) : null;
    }

    /** Opens an unbound socket on {@code stack}. */
    static UdpSocket open(NetStack stack) throws TernSocketException {
        final UdpSocket socket = stack.call(() -> new UdpSocket(stack, false, false));
        if (socket.handle < 0) {
            throw TernSocketException.of(-socket.handle, "udp open");
        }
        return socket;
    }

    /** Opens an unbound IPv6 socket on {@code stack}, which must have IPv6 ({@link NetStack.Builder#ipv6}). */
    static UdpSocket open6(NetStack stack, boolean dualStack) throws TernSocketException {
        if (!stack.udp().hasIpv6()) {
            throw new TernSocketException(SocketError.ADDRESS_NOT_AVAILABLE,
                "udp open: this stack has no IPv6 (NetStack.Builder.ipv6, or --ip6 on the command line)");
        }
        final UdpSocket socket = stack.call(() -> new UdpSocket(stack, true, dualStack));
        if (socket.handle < 0) {
            throw TernSocketException.of(-socket.handle, "udp open");
        }
        return socket;
    }

    /** Whether this is an IPv6 socket (a dual-stack one is). */
    public boolean ipv6() {
        return ipv6;
    }

    /** Whether this is a dual-stack socket ({@link NetStack#openUdpDualStack}) not bound to an IPv4 address. */
    public boolean dualStack() {
        return dualStack;
    }

    // ------------------------------------------------------------------------------------------ control

    /** Binds to {@code port} on any of our addresses (0: an ephemeral port); returns the port. */
    public int bind(int port) throws TernSocketException {
        return ipv6 ? bind(Ipv6Address.UNSPECIFIED, port) : bind(0, port);
    }

    /**
     * Binds to {@code address} (ours, a multicast group, a broadcast address, or 0 for any) and {@code port}; a
     * dual-stack socket is an IPv4 one after it.
     */
    public int bind(int address, int port) throws TernSocketException {
        checkPort(port);
        requireFamily(false, "bind");
        final int result = stack.call(() -> udp.bind(handle, address, port));
        if (result < 0) {
            throw TernSocketException.of(-result, "udp bind " + Ipv4Address.format(address) + ":" + port);
        }
        if (dualStack) {
            dualStack = false; // bound to an IPv4 address: an IPv4 socket now
            ipv6 = false;
        }
        return result;
    }

    /** Binds an IPv6 socket to {@code address} (one of ours, or {@link Ipv6Address#UNSPECIFIED} for any). */
    public int bind(Ipv6Address address, int port) throws TernSocketException {
        checkPort(port);
        requireFamily(true, "bind");
        final int result = stack.call(() -> udp.bind6(handle, address.high(), address.low(), port));
        if (result < 0) {
            throw TernSocketException.of(-result, "udp bind [" + address + "]:" + port);
        }
        return result;
    }

    /** An IPv6 socket sends to and receives from {@code address}, port {@code port}, only. */
    public void connect(Ipv6Address address, int port) throws TernSocketException {
        requireFamily(true, "connect");
        if (dualStack && Ipv6Address.isIpv4Mapped(address.high(), address.low())) {
            connect((int) address.low(), port);
            return;
        }
        final int result = stack.call(() -> udp.connect6(handle, address.high(), address.low(), port));
        if (result != SocketError.NONE) {
            throw TernSocketException.of(-result, "udp connect [" + address + "]:" + port);
        }
    }

    private static void checkPort(int port) {
        if (port < 0 || port > 65535) {
            throw new IllegalArgumentException("port must be 0..65535, got " + port);
        }
    }

    /** A call for one family's addresses on a socket of the other is the caller's mistake (dual-stack takes both). */
    private void requireFamily(boolean wantIpv6, String what) {
        if (wantIpv6 ? !ipv6 : ipv6 && !dualStack) {
            throw new IllegalArgumentException("udp " + what + ": an " + (ipv6 ? "IPv6" : "IPv4") + " socket takes "
                + (ipv6 ? "an Ipv6Address" : "an IPv4 address"));
        }
    }

    /** Sends to and receives from {@code address:port} only. */
    public void connect(int address, int port) throws TernSocketException {
        requireFamily(false, "connect");
        final int result = stack.call(() -> udp.connect(handle, address, port));
        if (result != SocketError.NONE) {
            throw TernSocketException.of(-result, "udp connect " + Ipv4Address.format(address) + ":" + port);
        }
    }

    public void disconnect() {
        stack.call(() -> {
            udp.disconnect(handle);
            return 0;
        });
    }

    /** Lets several sockets bind the same port (multicast receivers), as SO_REUSEADDR does for UDP. */
    public void reuseAddress(boolean enabled) {
        stack.call(() -> {
            udp.reuseAddress(handle, enabled);
            return 0;
        });
    }

    /** Allows sending to broadcast addresses (SO_BROADCAST); applies to datagrams sent from now on. */
    public void broadcast(boolean enabled) {
        broadcastEnabled = enabled;
    }

    /** TTL of multicast datagrams sent from now on (IP_MULTICAST_TTL, default 1: this link only). */
    public void multicastTtl(int ttl) {
        if (ttl < 0 || ttl > 255) {
            throw new IllegalArgumentException("multicast TTL must be 0..255, got " + ttl);
        }
        multicastTtl = ttl;
    }

    /** Whether local members of a group receive our own multicast datagrams (IP_MULTICAST_LOOP, default on). */
    public void multicastLoop(boolean enabled) {
        multicastLoop = enabled;
    }

    /** Joins {@code group} for any source (IP_ADD_MEMBERSHIP). */
    public void join(int group) {
        joinFiltered(group, IgmpLayer.EXCLUDE, new int[0]);
    }

    /** Joins {@code group} for datagrams from {@code sources} only (source-specific, IP_ADD_SOURCE_MEMBERSHIP). */
    public void joinSources(int group, int... sources) {
        if (sources.length == 0) {
            throw new IllegalArgumentException("a source-specific join needs at least one source");
        }
        joinFiltered(group, IgmpLayer.INCLUDE, sources);
    }

    /** Joins {@code group} for every source except {@code sources} (IP_BLOCK_SOURCE). */
    public void joinExcluding(int group, int... sources) {
        joinFiltered(group, IgmpLayer.EXCLUDE, sources);
    }

    private void joinFiltered(int group, int mode, int[] sources) {
        requireFamily(false, "join");
        if (!Ipv4Address.isMulticast(group)) {
            throw new IllegalArgumentException(Ipv4Address.format(group) + " is not a multicast group");
        }
        stack.call(() -> {
            udp.join(handle, group, mode == IgmpLayer.INCLUDE ? UdpLayer.INCLUDE : UdpLayer.EXCLUDE, sources);
            stack.igmp().join(handle, group, mode, sources, stack.clock().nanoTime());
            return 0;
        });
    }

    /**
     * Joins the IPv6 {@code group} for any source (IPV6_JOIN_GROUP): its datagrams to this socket's port reach it,
     * and MLDv2 reports the membership (RFC 3810). An IPv6 socket only.
     *
     * @throws IllegalArgumentException when {@code group} is not multicast
     * @throws IllegalStateException    when the stack has joined as many groups as it can
     */
    public void join(Ipv6Address group) {
        requireFamily(true, "join an IPv6 group");
        if (!Ipv6Address.isMulticast(group.high())) {
            throw new IllegalArgumentException(group + " is not a multicast group");
        }
        stack.call(() -> {
            if (udp.join6(handle, group.high(), group.low())
                && !stack.ipv6().joinGroup(group.high(), group.low(), stack.clock().nanoTime())) {
                udp.leave6(handle, group.high(), group.low());
                throw new IllegalStateException("the stack has joined as many IPv6 groups as it can");
            }
            return 0;
        });
    }

    /** Leaves the IPv6 {@code group} (IPV6_LEAVE_GROUP); MLD reports it left with the stack's last member. */
    public void leave(Ipv6Address group) {
        requireFamily(true, "leave an IPv6 group");
        stack.call(() -> {
            if (udp.leave6(handle, group.high(), group.low())) {
                stack.ipv6().leaveGroup(group.high(), group.low(), stack.clock().nanoTime());
            }
            return 0;
        });
    }

    /** Leaves {@code group} (IP_DROP_MEMBERSHIP). */
    public void leave(int group) {
        requireFamily(false, "leave");
        stack.call(() -> {
            if (udp.leave(handle, group)) {
                stack.igmp().leave(handle, group, stack.clock().nanoTime());
            }
            return 0;
        });
    }

    public int localPort() {
        return udp.localPort(handle);
    }

    /**
     * On a shard of a sharded stack ({@link StackShards}), makes every unicast datagram to this socket's local port
     * reach this shard, whatever shard the hash of its 4-tuple names (the others hand it over, counted as
     * {@code shard.rx.udp_port_claimed}), and ICMP errors about what it sent too: for a socket that talks to many
     * peers from one port. Without it only the datagrams whose 4-tuple the link steers here arrive, which suits a
     * socket bound on every shard. The claim ends when the socket closes, or when another shard claims the port. On
     * a stack of its own it does nothing. Needs a bound socket.
     */
    public void steerPortHere() {
        final UdpPortOwners owners = stack.udpPortOwners();
        if (owners == null) {
            return;
        }
        final int port = localPort();
        if (port == 0) {
            throw new IllegalStateException("steerPortHere needs a bound socket");
        }
        owners.claim(port, stack.shardIndex());
        claimedPort = port;
    }

    /** Datagrams this socket lost because its receive ring was full. */
    public long receiveDrops() {
        return udp.receiveDrops(handle);
    }

    // ------------------------------------------------------------------------------------------ data

    /** Queues a datagram to the connected peer; false when the send ring is full now. */
    public boolean send(MemorySegment data, long offset, int length) throws TernSocketException {
        return ipv6 && udp.remoteAddress(handle) == 0 ? sendTo6(0, 0, 0, data, offset, length)
            : sendTo(0, 0, data, offset, length);
    }

    /** {@link #sendTo(int, int, MemorySegment, long, int)} for an IPv6 socket. */
    public boolean sendTo(Ipv6Address address, int port, MemorySegment data, long offset, int length)
        throws TernSocketException {
        return sendTo6(address.high(), address.low(), port, data, offset, length);
    }

    /**
     * Queues a datagram from an IPv6 socket to ({@code high}, {@code low}), port {@code port} (all 0: the connected
     * peer), without an address object; false when the send ring has no room now.
     */
    public boolean sendTo6(long high, long low, int port, MemorySegment data, long offset, int length)
        throws TernSocketException {
        requireFamily(true, "send");
        if (dualStack && Ipv6Address.isIpv4Mapped(high, low)) {
            return sendTo((int) low, port, data, offset, length); // RFC 4038 §4.2: goes out as IPv4
        }
        throwPendingError("udp send");
        checkLength(length, true);
        if (high == 0 && low == 0 && udp.remotePort(handle) == 0) {
            throw new TernSocketException(SocketError.INVALID, "udp send: not connected, give an address");
        }
        if (!records.offer6(sendRing, high, low, port, 0, multicastTtl, data, offset, length)) {
            return false;
        }
        requestOutput();
        return true;
    }

    private static void checkLength(int length, boolean overIpv6) throws TernSocketException {
        if (length > (overIpv6 ? UdpHeader.MAX_PAYLOAD_IPV6 : UdpHeader.MAX_PAYLOAD) || length < 0) {
            throw TernSocketException.of(SocketError.MESSAGE_TOO_LONG, "udp send of " + length + " bytes");
        }
    }

    /**
     * Queues a datagram to {@code address:port} (0, 0: the connected peer); returns false when the send ring has
     * no room now. Throws for a pending error, a datagram over 65507 bytes, or broadcast without the option.
     */
    public boolean sendTo(int address, int port, MemorySegment data, long offset, int length) throws TernSocketException {
        requireFamily(false, "send");
        if (dualStack && !udp.takesIpv4Datagrams(handle)) {
            // As Linux: a dual-stack socket bound to an IPv6 address has no IPv4 path.
            throw new TernSocketException(SocketError.NET_UNREACHABLE,
                "udp send to an IPv4 address from a socket bound to an IPv6 one");
        }
        throwPendingError("udp send");
        checkLength(length, false);
        if ((address == Ipv4Address.LIMITED_BROADCAST || address == stack.address().broadcast())
            && !broadcastEnabled) {
            throw TernSocketException.of(SocketError.BROADCAST_NOT_ENABLED, "udp send to " + Ipv4Address.format(address));
        }
        if (address == 0 && udp.remotePort(handle) == 0) {
            throw new TernSocketException(SocketError.INVALID, "udp send: not connected, give an address");
        }
        final int flags = (broadcastEnabled ? DatagramRecords.SEND_BROADCAST : 0)
            | (multicastLoop ? DatagramRecords.SEND_MULTICAST_LOOP : 0);
        if (!records.offer(sendRing, address, port, flags, multicastTtl, data, offset, length)) {
            return false;
        }
        requestOutput();
        return true;
    }

    /** Like {@link #sendTo}, waiting up to {@code timeoutNs} for room. */
    public boolean sendTo(int address, int port, MemorySegment data, long offset, int length, long timeoutNs)
        throws TernSocketException {
        final long deadline = System.nanoTime() + timeoutNs;
        while (!sendTo(address, port, data, offset, length)) {
            if (await(WRITE, deadline) == 0) {
                return false;
            }
        }
        return true;
    }

    /**
     * Takes the oldest datagram: copies up to {@code capacity} bytes (the rest of a longer datagram is lost, as
     * with recv(2)) and returns how many, or -1 when none is waiting. The source is then in
     * {@link #lastSourceAddress()} and {@link #lastSourcePort()}.
     */
    public int receive(MemorySegment destination, long offset, int capacity) throws TernSocketException {
        return copyOldest(destination, offset, capacity, true);
    }

    /** The oldest datagram into {@code destination}, taken when {@code take}; -1 when none is waiting. */
    private int copyOldest(MemorySegment destination, long offset, int capacity, boolean take)
        throws TernSocketException {
        final String what = take ? "udp receive" : "udp peek";
        if (receiveHandler != null) {
            throw new IllegalStateException(what + " with a receive handler set: the handler gets the datagrams");
        }
        if (!records.peek(receiveRing)) {
            throwPendingError(what);
            return -1;
        }
        lastSourceAddress = records.address();
        lastSourceIpv6 = records.ipv6();
        lastSourceHigh = records.ipv6() ? records.addressHigh() : 0;
        lastSourceLow = records.ipv6() ? records.addressLow() : 0;
        lastSourcePort = records.port();
        lastKind = records.kind();
        lastLength = records.length();
        final int copied = records.copyPayload(receiveRing, destination, offset, capacity);
        if (take) {
            records.consume(receiveRing);
        }
        return copied;
    }

    /**
     * Like {@link #receive(MemorySegment, long, int)} but leaves the datagram waiting (MSG_PEEK): the next receive
     * returns it again, whole. The source is in {@link #lastSourceAddress()} and {@link #lastSourcePort()} as after a
     * receive.
     */
    public int peek(MemorySegment destination, long offset, int capacity) throws TernSocketException {
        return copyOldest(destination, offset, capacity, false);
    }

    /**
     * The length of the oldest waiting datagram, or -1 when none waits (FIONREAD on a datagram socket). Lets a reader
     * pack several datagrams into one buffer without truncating one that would not fit.
     */
    public int pendingLength() {
        return records.peek(receiveRing) ? records.length() : -1;
    }

    /** Like {@link #receive(MemorySegment, long, int)}, waiting up to {@code timeoutNs}; -1 on timeout. */
    public int receive(MemorySegment destination, long offset, int capacity, long timeoutNs) throws TernSocketException {
        final long deadline = System.nanoTime() + timeoutNs;
        int length;
        while ((length = receive(destination, offset, capacity)) < 0) {
            if (await(READ, deadline) == 0) {
                return -1;
            }
        }
        return length;
    }

    // ------------------------------------------------------------------------------------------ zero-copy receive

    /**
     * Sets the socket's {@link ReceiveHandler} (null removes it: {@link #receive} works again). Datagrams already
     * queued are offered to it at once, on the stack's thread, before this returns. Use from the thread that receives.
     */
    public void receiveHandler(ReceiveHandler handler) {
        refuseInsideHandler("change the receive handler");
        stack.call(() -> {
            if (inPlace == null) {
                inPlace = this::deliverInPlace;
            }
            receiveHandler = handler;
            udp.receiveHandler(handle, handler == null ? null : inPlace);
            return 0;
        });
    }

    /**
     * Held-frame zero-copy receive, from inside the {@link ReceiveHandler} only: keeps the datagram being offered
     * readable after the handler returns (the same {@code data}, {@code offset} and {@code length}), until
     * {@link NetStack#releaseHeld} of the hold returned here, from any thread. The datagram is taken whatever the
     * handler returns. Returns -1 where it cannot be held (the view then lives during the call only): it comes from
     * the receive queue, or from fragments, or the link lends no frames (AF_PACKET) or no more now (a quarter of its
     * receive buffers at most). See docs/DESIGN.md, "Zero-copy receive".
     */
    public long holdReceived() {
        if (!inReceiveHandler || !stack.isOwnerThread()) {
            return -1;
        }
        return udp.holdOffered(handle);
    }

    /** Any thread: the handler can take more; the stack offers it the queued datagrams at its next turn. */
    public void resumeReceive() {
        if (receiveHandler != null && !closed) {
            resumeRequested = true;
            requestOutput();
        }
    }

    private boolean deliverInPlace(int socket, int source, int sourcePort, int kind, MemorySegment data, long offset,
                                   int length) {
        final ReceiveHandler handler = receiveHandler;
        if (handler == null) {
            return false;
        }
        inReceiveHandler = true;
        try {
            return handler.onDatagram(this, source, sourcePort, data, offset, length);
        } finally {
            inReceiveHandler = false;
        }
    }

    private void refuseInsideHandler(String what) {
        if (inReceiveHandler && stack.isOwnerThread()) {
            throw new IllegalStateException("cannot " + what + " from inside a receive handler: return first");
        }
    }

    public int lastSourceAddress() {
        return lastSourceAddress;
    }

    /**
     * Whether the last datagram received came over IPv6 ({@link #lastSourceHigh}, {@link #lastSourceLow}) rather
     * than IPv4 ({@link #lastSourceAddress}): on a dual-stack socket, either.
     */
    public boolean lastSourceIpv6() {
        return lastSourceIpv6;
    }

    /** An IPv6 socket's last source, high 64 bits ({@link #lastSourceAddress} is 0 there). */
    public long lastSourceHigh() {
        return lastSourceHigh;
    }

    public long lastSourceLow() {
        return lastSourceLow;
    }

    /** An IPv6 socket's last source as an address (allocates: for cold paths). */
    public Ipv6Address lastSource6() {
        return new Ipv6Address(lastSourceHigh, lastSourceLow);
    }

    /**
     * Inside the {@link ReceiveHandler} of an IPv6 socket (which gets 0 as its {@code sourceAddress}), the source of
     * the datagram offered, high 64 bits.
     */
    public long offeredSourceHigh() {
        return udp.offeredSourceHigh();
    }

    public long offeredSourceLow() {
        return udp.offeredSourceLow();
    }

    public int lastSourcePort() {
        return lastSourcePort;
    }

    /** The full length of the last datagram received (more than was copied if it was truncated). */
    public int lastLength() {
        return lastLength;
    }

    /** True when the last datagram was sent to a broadcast (1) or multicast (2) address rather than to us. */
    public boolean lastWasGroupAddressed() {
        return lastKind != 0;
    }

    @Override
    public int readyOps() {
        int ops = 0;
        if (receiveHandler == null && receiveRing.available() > 0) {
            ops |= READ;
        }
        if (sendRing.freeSpace() >= WRITABLE_THRESHOLD) {
            ops |= WRITE;
        }
        if (!closed && udp.pendingError(handle) != SocketError.NONE) {
            ops |= ERROR;
        }
        return ops;
    }

    /**
     * Throws the error the network reported for this socket (ICMP port unreachable to a connected socket), once, as
     * the next send or receive would: for a socket whose datagrams go to a {@link ReceiveHandler}, which never calls
     * {@link #receive}. Does nothing when there is none. Allocates nothing then.
     */
    public void checkError() throws TernSocketException {
        throwPendingError("udp");
    }

    private void throwPendingError(String what) throws TernSocketException {
        final int error = udp.pendingError(handle);
        if (error != SocketError.NONE) {
            udp.takeError(handle);
            throw TernSocketException.of(error, what);
        }
    }

    // ------------------------------------------------------------------------------------------ stack side

    private void requestOutput() {
        if (OUTPUT_QUEUED.compareAndSet(this, 0, 1)) {
            stack.requestOutput(this);
        }
    }

    /** Stack thread: sends what the send ring holds; stays queued if the link ran out of room. */
    boolean flushOutput(long nowNs) {
        OUTPUT_QUEUED.setRelease(this, 0);
        if (closed) {
            return false;
        }
        if (resumeRequested) {
            resumeRequested = false;
            udp.deliverQueued(handle);
        }
        udp.flush(handle, nowNs);
        if (sendRing.available() > 0) {
            requestOutput();
            return true;
        }
        return false;
    }

    @Override
    public void readable(int socket) {
        signal();
    }

    @Override
    public void writable(int socket) {
        signal();
    }

    /** Leaves every group and closes the socket; queued datagrams not yet sent are sent first when possible. */
    @Override
    public void close() {
        refuseInsideHandler("close the socket");
        if (closed) {
            return;
        }
        stack.call(() -> {
            udp.flush(handle, stack.clock().nanoTime());
            for (int group : udp.groups(handle)) {
                udp.leave(handle, group);
                stack.igmp().leave(handle, group, stack.clock().nanoTime());
            }
            final long[] groups6 = udp.groups6(handle);
            for (int i = 0; i < groups6.length; i += 2) {
                udp.leave6(handle, groups6[i], groups6[i + 1]);
                stack.ipv6().leaveGroup(groups6[i], groups6[i + 1], stack.clock().nanoTime());
            }
            closed = true;
            udp.close(handle);
            return 0;
        });
        final int claimed = claimedPort;
        if (claimed != 0) {
            stack.udpPortOwners().release(claimed, stack.shardIndex());
        }
        final Selector current = selector;
        if (current != null) {
            current.deregister(this);
        }
    }
}
