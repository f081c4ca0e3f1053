package dev.tern.nio;

import dev.tern.core.net.Ipv4Address;
import dev.tern.stack.NetStack;
import dev.tern.stack.SelectableSocket;
import dev.tern.stack.TernSocketException;
import dev.tern.stack.UdpSocket;

import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.lang.ref.Cleaner;
import java.net.DatagramSocket;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.NetworkInterface;
import java.net.ProtocolFamily;
import java.net.SocketAddress;
import java.net.SocketOption;
import java.net.StandardSocketOptions;
import java.nio.ByteBuffer;
import java.nio.channels.AlreadyBoundException;
import java.nio.channels.AlreadyConnectedException;
import java.nio.channels.ClosedChannelException;
import java.nio.channels.DatagramChannel;
import java.nio.channels.MembershipKey;
import java.nio.channels.NotYetConnectedException;
import java.nio.channels.SelectableChannel;
import java.nio.channels.SelectionKey;
import java.util.Objects;
import java.util.Set;

/**
 * A {@link DatagramChannel} served by a Tern {@link UdpSocket} or, when the rules say so, by a kernel channel. The
 * side is chosen by the first of {@link #bind}, {@link #connect}, {@link #send} (by its target), {@link #receive}
 * (an implicit bind) or {@link #join} (by the group).
 *
 * <p>On a sharded stack the socket lives on shard 0, which keeps the multicast memberships, and claims its port there
 * ({@link UdpSocket#steerPortHere}), so every peer's datagrams reach it whatever shard the link steers them to.
 *
 * <p>On Tern, {@link #send}, {@link #receive}, {@link #read} and {@link #write} of a single buffer copy between it
 * and the socket's datagram rings without allocating; the source address {@link #receive} returns is the same
 * object while datagrams keep coming from the same source, and a {@link #send} to the target it was last given
 * decodes nothing (the JDK's own channel caches its last sender the same way). Multicast: {@link #join} with and
 * without a source, {@link MembershipKey#block}/{@code unblock}/{@code drop} (IGMPv3 filters on the wire); an IPv6
 * group for any source (MLDv2), source filters for IPv6 groups being refused as the JDK refuses what its system lacks.
 *
 * <p>An {@code INET6} channel (also {@code DatagramChannel.open()}, as the JDK's) is dual-stack: its family's
 * addressing is {@link DatagramAddressing}'s.
 *
 * <p>Thread-safe as the JDK's: one reader and one writer at a time. Deviations (docs/NIO.md): the
 * {@link NetworkInterface} given to {@code join} or {@code IP_MULTICAST_IF} is recorded, not used (a Tern stack has
 * one interface); {@code SO_RCVBUF}/{@code SO_SNDBUF} are hints that report the stack's ring sizes; {@code IP_TOS} is
 * not supported on Tern; a kernel channel's {@code join} returns the kernel's own key.
 */
final class TernDatagramChannel extends DatagramChannel implements TernChannel {
    static final Set<SocketOption<?>> TERN_OPTIONS = Set.of(StandardSocketOptions.SO_SNDBUF,
        StandardSocketOptions.SO_RCVBUF, StandardSocketOptions.SO_REUSEADDR, StandardSocketOptions.SO_BROADCAST,
        StandardSocketOptions.IP_MULTICAST_IF, StandardSocketOptions.IP_MULTICAST_TTL,
        StandardSocketOptions.IP_MULTICAST_LOOP);

    private final TernSelectorProvider ternProvider;
    private final ChannelKeys keys = new ChannelKeys();
    private final Object readLock = new Object();
    private final Object writeLock = new Object();
    private final Object stateLock = new Object();
    private final Buffers readBuffers = new Buffers();
    private final Buffers writeBuffers = new Buffers();
    private final DatagramMemberships memberships = new DatagramMemberships();
    private volatile DatagramChannel kernel;
    private volatile UdpSocket socket;
    private InetSocketAddress localAddress;
    /** The local address is the source a connect chose, on a socket bound to the wildcard: disconnect undoes it. */
    private boolean localFromConnect;
    private volatile InetSocketAddress remoteAddress;
    private Closer closer;
    private Cleaner.Cleanable cleanable;
    private DatagramSocketAdaptor adaptor;
    private byte[] scratch;
    private final DatagramAddressing addressing;

    // Options, recorded until a side serves the channel (guarded by stateLock).
    private boolean reuseAddress;
    private boolean broadcast;
    private boolean multicastLoop = true;
    private int multicastTtl = 1;
    private NetworkInterface multicastInterface;
    private int receiveBuffer;
    private int sendBuffer;

    TernDatagramChannel(TernSelectorProvider provider, ProtocolFamily family) {
        super(provider);
        this.ternProvider = provider;
        this.addressing = new DatagramAddressing(family == java.net.StandardProtocolFamily.INET6);
    }

    static TernDatagramChannel kernel(TernSelectorProvider provider, DatagramChannel kernelChannel) {
        final TernDatagramChannel channel = new TernDatagramChannel(provider, null);
        channel.kernel = kernelChannel;
        provider.countKernelChannel();
        return channel;
    }

    // ------------------------------------------------------------------------------------------ TernChannel

    @Override
    public SelectableSocket ternSocket() {
        return socket;
    }

    @Override
    public SelectableChannel kernelChannel() {
        return kernel;
    }

    @Override
    public ChannelKeys keys() {
        return keys;
    }

    @Override
    public int ternInterest(int interestOps) {
        int ops = interestOps == 0 ? 0 : SelectableSocket.ERROR;
        if ((interestOps & SelectionKey.OP_READ) != 0) {
            ops |= SelectableSocket.READ;
        }
        if ((interestOps & SelectionKey.OP_WRITE) != 0) {
            ops |= SelectableSocket.WRITE;
        }
        return ops;
    }

    @Override
    public int translateReadyOps(int ternReady, int interestOps) {
        if ((ternReady & SelectableSocket.ERROR) != 0) {
            return interestOps;
        }
        int ops = 0;
        if ((ternReady & SelectableSocket.READ) != 0) {
            ops |= SelectionKey.OP_READ;
        }
        if ((ternReady & SelectableSocket.WRITE) != 0) {
            ops |= SelectionKey.OP_WRITE;
        }
        return ops & interestOps;
    }

    // ------------------------------------------------------------------------------------------ side

    /**
     * The side is decided: {@code side} serves the channel from now on; {@code bindTo} is the address of the bind that
     * decided it (null for any other call). Caller holds stateLock.
     */
    private void decide(Rules.Side side, InetSocketAddress bindTo) throws IOException {
        if (side == Rules.Side.TERN && ternProvider.ternOrFallback() == Rules.Side.TERN) {
            final NetStack stack = ternProvider.stack();
            final UdpSocket opened;
            try {
                opened = addressing.open(stack, bindTo);
            } catch (TernSocketException e) {
                throw Errors.translate(e);
            }
            opened.reuseAddress(reuseAddress);
            opened.broadcast(broadcast);
            opened.multicastLoop(multicastLoop);
            opened.multicastTtl(multicastTtl);
            final NioCounters counters = ternProvider.counters();
            closer = new Closer(opened, counters);
            cleanable = Channels.CLEANER.register(this, closer);
            if (counters != null) {
                counters.add(counters.udpOpened, 1);
            }
            socket = opened;
            return;
        }
        final DatagramChannel made = ternProvider.kernel().openDatagramChannel(addressing.inet6()
            ? java.net.StandardProtocolFamily.INET6 : java.net.StandardProtocolFamily.INET);
        try {
            made.setOption(StandardSocketOptions.SO_REUSEADDR, reuseAddress);
            made.setOption(StandardSocketOptions.SO_BROADCAST, broadcast);
            made.setOption(StandardSocketOptions.IP_MULTICAST_LOOP, multicastLoop);
            made.setOption(StandardSocketOptions.IP_MULTICAST_TTL, multicastTtl);
            if (multicastInterface != null) {
                made.setOption(StandardSocketOptions.IP_MULTICAST_IF, multicastInterface);
            }
            if (receiveBuffer > 0) {
                made.setOption(StandardSocketOptions.SO_RCVBUF, receiveBuffer);
            }
            if (sendBuffer > 0) {
                made.setOption(StandardSocketOptions.SO_SNDBUF, sendBuffer);
            }
            made.configureBlocking(isBlocking());
        } catch (IOException | RuntimeException e) {
            made.close();
            throw e;
        }
        kernel = made;
        ternProvider.countKernelChannel();
    }

    /** Closes a Tern socket explicitly or, for an abandoned channel, from the cleaner. */
    private static final class Closer implements Runnable {
        private final UdpSocket socket;
        private final NioCounters counters;
        volatile boolean explicit;

        Closer(UdpSocket socket, NioCounters counters) {
            this.socket = socket;
            this.counters = counters;
        }

        @Override
        public void run() {
            socket.close();
            socket.stopWaiting();
            if (counters != null) {
                counters.add(counters.udpClosed, 1);
                if (!explicit) {
                    counters.add(counters.udpAbandoned, 1);
                }
            }
        }
    }

    /** Binds a Tern socket not bound yet to an ephemeral port (a send or receive before any bind). */
    private void bindImplicitly(UdpSocket s) throws IOException {
        if (localAddress == null) {
            try {
                final int port = s.bind(0);
                localAddress = DatagramAddressing.implicitLocal(s, port, ternProvider.stack());
                s.steerPortHere();
            } catch (TernSocketException e) {
                throw Errors.translate(e);
            }
        }
    }

    private <E extends IOException> E kernelFailed(E e) {
        final DatagramChannel k = kernel;
        if (k != null && !k.isOpen() && isOpen()) {
            try {
                close();
            } catch (IOException ignored) {
                // the kernel side is closed already
            }
        }
        return e;
    }

    private void ensureOpen() throws ClosedChannelException {
        Channels.ensureOpen(isOpen());
    }

    // ------------------------------------------------------------------------------------------ bind, connect

    @Override
    public DatagramChannel bind(SocketAddress local) throws IOException {
        DatagramChannel k;
        synchronized (readLock) {
            synchronized (writeLock) {
                synchronized (stateLock) {
                    ensureOpen();
                    k = kernel;
                    if (k == null) {
                        if (localAddress != null) {
                            throw new AlreadyBoundException();
                        }
                        final InetSocketAddress address = local == null ? new InetSocketAddress(0)
                            : addressing.checkFamily(Addresses.checked(local));
                        if (socket == null) {
                            decide(ternProvider.rules().listen(Rules.Transport.UDP, address), address);
                            k = kernel;
                        }
                        if (k == null) {
                            final UdpSocket s = socket;
                            try {
                                localAddress = DatagramAddressing.bind(s, address, ternProvider.stack());
                                s.steerPortHere();
                            } catch (TernSocketException e) {
                                throw Errors.translate(e);
                            }
                            keys.decided();
                            return this;
                        }
                    }
                }
            }
        }
        keys.decided();
        try {
            k.bind(local);
        } catch (IOException e) {
            throw kernelFailed(e);
        }
        return this;
    }

    @Override
    public DatagramChannel connect(SocketAddress remote) throws IOException {
        DatagramChannel k;
        synchronized (readLock) {
            synchronized (writeLock) {
                synchronized (stateLock) {
                    ensureOpen();
                    k = kernel;
                    if (k == null) {
                        if (remoteAddress != null) {
                            throw new AlreadyConnectedException();
                        }
                        final InetSocketAddress inet = addressing.checkFamily(Addresses.checked(remote));
                        if (socket == null) {
                            decide(ternProvider.rules().connect(Rules.Transport.UDP, inet), null);
                            k = kernel;
                        }
                        if (k == null) {
                            final UdpSocket s = socket;
                            final InetSocketAddress connectedFrom;
                            try {
                                connectedFrom = DatagramAddressing.connect(s, inet, ternProvider.stack());
                            } catch (TernSocketException e) {
                                throw Errors.translate(e);
                            }
                            if (localAddress == null) {
                                s.steerPortHere();
                            }
                            if (localAddress == null || localAddress.getAddress().isAnyLocalAddress()) {
                                // As the JDK's: a connected socket on the wildcard reports the source it sends from.
                                localAddress = connectedFrom;
                                localFromConnect = true;
                            }
                            remoteAddress = inet;
                            keys.decided();
                            return this;
                        }
                    }
                }
            }
        }
        keys.decided();
        try {
            k.connect(remote);
        } catch (IOException e) {
            throw kernelFailed(e);
        }
        return this;
    }

    @Override
    public DatagramChannel disconnect() throws IOException {
        final DatagramChannel k = kernel;
        if (k != null) {
            k.disconnect();
            return this;
        }
        synchronized (readLock) {
            synchronized (writeLock) {
                synchronized (stateLock) {
                    if (!isOpen() || remoteAddress == null) {
                        return this;
                    }
                    socket.disconnect();
                    remoteAddress = null;
                    if (localFromConnect) {
                        localAddress = DatagramAddressing.implicitLocal(socket, socket.localPort(), ternProvider.stack());
                        localFromConnect = false;
                    }
                }
            }
        }
        return this;
    }

    @Override
    public boolean isConnected() {
        final DatagramChannel k = kernel;
        return k != null ? k.isConnected() : remoteAddress != null;
    }

    @Override
    public SocketAddress getRemoteAddress() throws IOException {
        final DatagramChannel k = kernel;
        if (k != null) {
            return k.getRemoteAddress();
        }
        ensureOpen();
        return remoteAddress;
    }

    @Override
    public SocketAddress getLocalAddress() throws IOException {
        final DatagramChannel k = kernel;
        if (k != null) {
            return k.getLocalAddress();
        }
        ensureOpen();
        synchronized (stateLock) {
            return localAddress;
        }
    }

    // ------------------------------------------------------------------------------------------ receive, read

    /** The socket for a receive, bound implicitly (and the side decided) if nothing decided it yet; null: kernel. */
    private UdpSocket socketForReceive() throws IOException {
        synchronized (stateLock) {
            ensureOpen();
            if (kernel == null && socket == null) {
                decide(ternProvider.rules().listen(Rules.Transport.UDP, null), null);
                if (kernel == null) {
                    keys.decided();
                }
            }
            if (kernel != null) {
                return null;
            }
            bindImplicitly(socket);
            return socket;
        }
    }

    @Override
    public SocketAddress receive(ByteBuffer destination) throws IOException {
        Objects.requireNonNull(destination, "destination");
        if (destination.isReadOnly()) {
            throw new IllegalArgumentException("Read-only buffer");
        }
        synchronized (readLock) {
            final UdpSocket s = kernel == null ? socketForReceive() : null;
            if (s == null) {
                try {
                    return kernel.receive(destination);
                } catch (IOException e) {
                    throw kernelFailed(e);
                }
            }
            final int n = isBlocking() ? receiveBlocking(s, destination) : receiveOnce(s, destination);
            return n < 0 ? null : source(s);
        }
    }

    /**
     * A blocking receive that gives up after {@code timeoutMs} (0: never) with a
     * {@link java.net.SocketTimeoutException}: the classic {@code DatagramSocket.receive} with {@code SO_TIMEOUT}.
     */
    SocketAddress receiveWithin(ByteBuffer destination, int timeoutMs) throws IOException {
        synchronized (readLock) {
            final UdpSocket s = kernel == null ? socketForReceive() : null;
            if (s == null) {
                final DatagramSocket kernelSocket = kernel.socket();
                kernelSocket.setSoTimeout(timeoutMs);
                final java.net.DatagramPacket packet = new java.net.DatagramPacket(destination.array(),
                    destination.arrayOffset() + destination.position(), destination.remaining());
                kernelSocket.receive(packet);
                destination.position(destination.position() + packet.getLength());
                return packet.getSocketAddress();
            }
            if (timeoutMs == 0) {
                return receiveBlocking(s, destination) < 0 ? null : source(s);
            }
            final long deadline = System.nanoTime() + timeoutMs * 1_000_000L;
            int n = -1;
            try {
                begin();
                while ((n = receiveOnce(s, destination)) < 0 && isOpen()) {
                    final long now = System.nanoTime();
                    if (deadline - now <= 0) {
                        throw new java.net.SocketTimeoutException("Receive timed out");
                    }
                    s.awaitReady(SelectableSocket.READ, Math.min(deadline, now + Channels.WAIT_SLICE_NS));
                }
                return n < 0 ? null : source(s);
            } finally {
                end(n >= 0);
            }
        }
    }

    private int receiveOnce(UdpSocket s, ByteBuffer destination) throws IOException {
        final int position = destination.position();
        final int n;
        try {
            n = s.receive(readBuffers.segment(destination), Buffers.offset(destination), destination.limit() - position);
        } catch (TernSocketException e) {
            throw Errors.translateDatagram(e);
        }
        if (n > 0) {
            destination.position(position + n);
        }
        return n;
    }

    private int receiveBlocking(UdpSocket s, ByteBuffer destination) throws IOException {
        int n = -1;
        try {
            begin();
            while ((n = receiveOnce(s, destination)) < 0 && isOpen()) {
                s.awaitReady(SelectableSocket.READ, Channels.sliceDeadline());
            }
            return n;
        } finally {
            end(n >= 0);
        }
    }

    /** The last datagram's source, made again only when it differs from the one before. */
    private InetSocketAddress source(UdpSocket s) {
        return addressing.source(s);
    }

    private UdpSocket connectedTern() throws ClosedChannelException {
        ensureOpen();
        if (remoteAddress == null) {
            throw new NotYetConnectedException();
        }
        return socket;
    }

    @Override
    public int read(ByteBuffer destination) throws IOException {
        Objects.requireNonNull(destination, "destination");
        if (destination.isReadOnly()) {
            throw new IllegalArgumentException("Read-only buffer");
        }
        final DatagramChannel k = kernel;
        if (k != null) {
            try {
                return k.read(destination);
            } catch (IOException e) {
                throw kernelFailed(e);
            }
        }
        synchronized (readLock) {
            final UdpSocket s = connectedTern();
            final int n = isBlocking() ? receiveBlocking(s, destination) : receiveOnce(s, destination);
            return Math.max(n, 0);
        }
    }

    @Override
    public long read(ByteBuffer[] destinations, int offset, int length) throws IOException {
        Objects.checkFromIndexSize(offset, length, destinations.length);
        final DatagramChannel k = kernel;
        if (k != null) {
            return k.read(destinations, offset, length);
        }
        synchronized (readLock) {
            final UdpSocket s = connectedTern();
            final ByteBuffer whole = ByteBuffer.wrap(scratch());
            final int n = isBlocking() ? receiveBlocking(s, whole) : receiveOnce(s, whole);
            if (n <= 0) {
                return 0;
            }
            whole.flip();
            for (int i = offset; i < offset + length && whole.hasRemaining(); i++) {
                final int part = Math.min(destinations[i].remaining(), whole.remaining());
                destinations[i].put(destinations[i].position(), whole, whole.position(), part);
                destinations[i].position(destinations[i].position() + part);
                whole.position(whole.position() + part);
            }
            return n;
        }
    }

    private byte[] scratch() {
        if (scratch == null) {
            scratch = new byte[65536];
        }
        return scratch;
    }

    // ------------------------------------------------------------------------------------------ send, write

    @Override
    public int send(ByteBuffer source, SocketAddress target) throws IOException {
        Objects.requireNonNull(source, "source");
        Objects.requireNonNull(target, "target");
        synchronized (writeLock) {
            final UdpSocket s;
            synchronized (stateLock) {
                ensureOpen();
                if (kernel == null && socket == null) {
                    decide(ternProvider.rules().connect(Rules.Transport.UDP,
                        addressing.checkFamily(Addresses.checked(target))), null);
                    if (kernel == null) {
                        keys.decided();
                    }
                }
                s = socket;
                if (s != null) {
                    bindImplicitly(s);
                }
            }
            if (s == null) {
                try {
                    return kernel.send(source, target);
                } catch (IOException e) {
                    throw kernelFailed(e);
                }
            }
            if (!addressing.isLastTarget(target)) {
                final InetSocketAddress inet = addressing.checkFamily(Addresses.checked(target));
                final InetSocketAddress connected = remoteAddress;
                if (connected != null && !connected.equals(inet)) {
                    throw new AlreadyConnectedException();
                }
                addressing.target(s, inet, ternProvider.stack());
            }
            return isBlocking() ? sendBlocking(s, true, source) : sendOnce(s, true, source);
        }
    }

    /** One try: to the target {@link #send} decoded ({@code toTarget}), or to the connected peer. */
    private int sendOnce(UdpSocket s, boolean toTarget, ByteBuffer source) throws IOException {
        final int position = source.position();
        final int length = source.limit() - position;
        final MemorySegment segment = writeBuffers.segment(source);
        final boolean sent;
        try {
            sent = toTarget ? addressing.sendToTarget(s, segment, Buffers.offset(source), length)
                : s.send(segment, Buffers.offset(source), length);
        } catch (TernSocketException e) {
            throw Errors.translateDatagram(e);
        }
        if (!sent) {
            return 0;
        }
        source.position(position + length);
        return length;
    }

    private int sendBlocking(UdpSocket s, boolean toTarget, ByteBuffer source) throws IOException {
        int n = 0;
        try {
            begin();
            while ((n = sendOnce(s, toTarget, source)) == 0 && source.hasRemaining() && isOpen()) {
                s.awaitReady(SelectableSocket.WRITE, Channels.sliceDeadline());
            }
            return n;
        } finally {
            end(n > 0 || !source.hasRemaining());
        }
    }

    @Override
    public int write(ByteBuffer source) throws IOException {
        Objects.requireNonNull(source, "source");
        final DatagramChannel k = kernel;
        if (k != null) {
            try {
                return k.write(source);
            } catch (IOException e) {
                throw kernelFailed(e);
            }
        }
        synchronized (writeLock) {
            final UdpSocket s = connectedTern();
            return isBlocking() ? sendBlocking(s, false, source) : sendOnce(s, false, source);
        }
    }

    @Override
    public long write(ByteBuffer[] sources, int offset, int length) throws IOException {
        Objects.checkFromIndexSize(offset, length, sources.length);
        final DatagramChannel k = kernel;
        if (k != null) {
            return k.write(sources, offset, length);
        }
        synchronized (writeLock) {
            final UdpSocket s = connectedTern();
            final ByteBuffer whole = ByteBuffer.wrap(scratch());
            for (int i = offset; i < offset + length; i++) {
                if (sources[i].remaining() > whole.remaining()) {
                    throw new IOException("Message too long");
                }
                whole.put(sources[i].duplicate());
            }
            whole.flip();
            final int n = isBlocking() ? sendBlocking(s, false, whole) : sendOnce(s, false, whole);
            if (n > 0) {
                for (int i = offset; i < offset + length; i++) {
                    sources[i].position(sources[i].limit());
                }
            }
            return n;
        }
    }

    // ------------------------------------------------------------------------------------------ multicast

    @Override
    public MembershipKey join(InetAddress group, NetworkInterface networkInterface) throws IOException {
        return join(group, networkInterface, null);
    }

    @Override
    public MembershipKey join(InetAddress group, NetworkInterface networkInterface, InetAddress source) throws IOException {
        Objects.requireNonNull(networkInterface, "interface");
        return join0(group, networkInterface, source);
    }

    /**
     * A join from a classic {@code MulticastSocket}, whose interface may be null ("any"): Tern's side needs none; the
     * kernel's gets the host's first interface. (A Tern namespace's kernel may have no interface with an address, and
     * then the JDK lists none at all.)
     */
    MembershipKey joinAnyInterface(InetAddress group, NetworkInterface networkInterface) throws IOException {
        synchronized (stateLock) {
            ensureOpen();
            if (kernel == null && socket == null) {
                decide(ternProvider.rules().join(group), null);
                if (kernel == null) {
                    keys.decided();
                }
            }
        }
        if (networkInterface == null && kernel != null) {
            networkInterface = NetworkInterface.networkInterfaces().findFirst()
                .orElseThrow(() -> new java.net.SocketException("no network interface to join " + group + " on"));
        }
        return join0(group, networkInterface, null);
    }

    private MembershipKey join0(InetAddress group, NetworkInterface networkInterface, InetAddress source) throws IOException {
        Objects.requireNonNull(group, "group");
        if (!group.isMulticastAddress()) {
            throw new IllegalArgumentException("Group not a multicast address");
        }
        if (group instanceof java.net.Inet6Address && !addressing.inet6()) {
            throw new IllegalArgumentException("Only IPv6 sockets can join IPv6 multicast group");
        }
        final DatagramChannel k;
        synchronized (stateLock) {
            ensureOpen();
            if (kernel == null && socket == null) {
                decide(ternProvider.rules().join(group), null);
                if (kernel == null) {
                    keys.decided();
                }
            }
            k = kernel;
            if (k == null) {
                return memberships.join(this, socket, group, networkInterface, source);
            }
        }
        return source == null ? k.join(group, networkInterface) : k.join(group, networkInterface, source);
    }

    void drop(TernMembershipKey key) {
        synchronized (stateLock) {
            memberships.drop(isOpen() ? socket : null, key);
        }
    }

    void block(TernMembershipKey key, InetAddress source) {
        synchronized (stateLock) {
            memberships.block(socket, key, source);
        }
    }

    void unblock(TernMembershipKey key, InetAddress source) {
        synchronized (stateLock) {
            memberships.unblock(socket, key, source);
        }
    }

    // ------------------------------------------------------------------------------------------ options

    @Override
    public <T> DatagramChannel setOption(SocketOption<T> name, T value) throws IOException {
        final DatagramChannel k = kernel;
        if (k != null) {
            k.setOption(name, value);
            return this;
        }
        Channels.checkOption(name, value, TERN_OPTIONS);
        synchronized (stateLock) {
            ensureOpen();
            final UdpSocket s = socket;
            if (name == StandardSocketOptions.SO_REUSEADDR) {
                reuseAddress = (Boolean) value;
                if (s != null) {
                    s.reuseAddress(reuseAddress);
                }
            } else if (name == StandardSocketOptions.SO_BROADCAST) {
                broadcast = (Boolean) value;
                if (s != null) {
                    s.broadcast(broadcast);
                }
            } else if (name == StandardSocketOptions.IP_MULTICAST_LOOP) {
                multicastLoop = (Boolean) value;
                if (s != null) {
                    s.multicastLoop(multicastLoop);
                }
            } else if (name == StandardSocketOptions.IP_MULTICAST_TTL) {
                final int ttl = (Integer) value;
                if (ttl < 0 || ttl > 255) {
                    throw new IllegalArgumentException("Invalid TTL/hop value: " + ttl);
                }
                multicastTtl = ttl;
                if (s != null) {
                    s.multicastTtl(ttl);
                }
            } else if (name == StandardSocketOptions.IP_MULTICAST_IF) {
                multicastInterface = (NetworkInterface) Objects.requireNonNull(value, "interface");
            } else {
                final int size = (Integer) value;
                if (size <= 0) {
                    throw new IllegalArgumentException("Invalid " + (name == StandardSocketOptions.SO_RCVBUF ? "receive"
                        : "send") + " buffer size: " + size);
                }
                if (name == StandardSocketOptions.SO_RCVBUF) {
                    receiveBuffer = size;
                } else {
                    sendBuffer = size;
                }
            }
        }
        return this;
    }

    @Override
    @SuppressWarnings("unchecked")
    public <T> T getOption(SocketOption<T> name) throws IOException {
        final DatagramChannel k = kernel;
        if (k != null) {
            return k.getOption(name);
        }
        Channels.checkSupported(name, TERN_OPTIONS);
        synchronized (stateLock) {
            ensureOpen();
            final Object value;
            if (name == StandardSocketOptions.SO_REUSEADDR) {
                value = reuseAddress;
            } else if (name == StandardSocketOptions.SO_BROADCAST) {
                value = broadcast;
            } else if (name == StandardSocketOptions.IP_MULTICAST_LOOP) {
                value = multicastLoop;
            } else if (name == StandardSocketOptions.IP_MULTICAST_TTL) {
                value = multicastTtl;
            } else if (name == StandardSocketOptions.IP_MULTICAST_IF) {
                value = multicastInterface;
            } else if (name == StandardSocketOptions.SO_RCVBUF) {
                value = ternProvider.stack().udp().config().receiveBufferBytes();
            } else {
                value = ternProvider.stack().udp().config().sendBufferBytes();
            }
            return (T) value;
        }
    }

    @Override
    public Set<SocketOption<?>> supportedOptions() {
        final DatagramChannel k = kernel;
        return k != null ? k.supportedOptions() : TERN_OPTIONS;
    }

    // ------------------------------------------------------------------------------------------ mode, close

    @Override
    protected void implConfigureBlocking(boolean block) throws IOException {
        final DatagramChannel k = kernel;
        if (k != null) {
            k.configureBlocking(block);
        }
    }

    @Override
    protected void implCloseSelectableChannel() throws IOException {
        final DatagramChannel k = kernel;
        if (k != null) {
            k.close();
        }
        synchronized (stateLock) {
            memberships.invalidateAll();
            if (cleanable != null) {
                closer.explicit = true;
                cleanable.clean();
            }
        }
    }

    @Override
    public DatagramSocket socket() {
        synchronized (stateLock) {
            if (adaptor == null) {
                adaptor = DatagramSocketAdaptor.of(this);
            }
            return adaptor;
        }
    }

    @Override
    public String toString() {
        return getClass().getSimpleName() + "[" + (!isOpen() ? "closed" : kernel != null ? "kernel " + kernel
            : "local=" + localAddress + (remoteAddress == null ? "" : " remote=" + remoteAddress)) + "]";
    }

    static String describe(int address, int port) {
        return Ipv4Address.format(address) + ":" + port;
    }
}
