package dev.tern.nio;

import dev.tern.core.io.SocketError;
import dev.tern.stack.NetStack;
import dev.tern.stack.SelectableSocket;
import dev.tern.stack.TcpConnection;
import dev.tern.stack.TernSocketException;
import dev.tern.tcp.TcpOptions;

import java.io.IOException;
import java.lang.ref.Cleaner;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketAddress;
import java.net.SocketException;
import java.net.SocketOption;
import java.net.StandardSocketOptions;
import java.nio.ByteBuffer;
import java.nio.channels.AlreadyBoundException;
import java.nio.channels.AlreadyConnectedException;
import java.nio.channels.ClosedChannelException;
import java.nio.channels.ConnectionPendingException;
import java.nio.channels.NoConnectionPendingException;
import java.nio.channels.NotYetConnectedException;
import java.nio.channels.SelectableChannel;
import java.nio.channels.SelectionKey;
import java.nio.channels.SocketChannel;
import java.util.Objects;
import java.util.Set;

/**
 * A {@link SocketChannel} served by Tern's TCP or, when the rules say so, by a kernel channel it delegates to. The
 * side is chosen at {@link #bind} or {@link #connect} ({@link Rules}); options set before then are applied to
 * whichever side serves it.
 *
 * <p>On Tern, {@link #read}/{@link #write} copy between the caller's buffer and the connection's off-heap rings
 * ({@link Buffers}: nothing is allocated with a direct buffer, nor with a heap buffer used again). A blocking call
 * waits on the connection's readiness ({@link SelectableSocket#awaitReady}), which polls the stack on the calling
 * thread between the runner's turns; closing the channel or interrupting the thread ends the wait, as
 * {@link java.nio.channels.spi.AbstractInterruptibleChannel} requires.
 *
 * <p>Thread-safe as the JDK's: one reader and one writer at a time (each direction has its lock), any thread may
 * close. Deviations, each in docs/NIO.md: {@code bind} to port 0 reports port 0 until connect picks the port;
 * {@code SO_LINGER} above 0 makes a blocking channel's close wait for the peer's acknowledgment of the data and the FIN,
 * at most that many seconds; {@code IP_TOS} is not supported on Tern.
 */
final class TernSocketChannel extends SocketChannel implements TernChannel {
    private static final int UNCONNECTED = 0;
    private static final int PENDING = 1;
    private static final int CONNECTED = 2;

    /** The options a Tern socket channel takes (the kernel's take the kernel's set). */
    static final Set<SocketOption<?>> TERN_OPTIONS = Set.of(StandardSocketOptions.SO_SNDBUF,
        StandardSocketOptions.SO_RCVBUF, StandardSocketOptions.SO_KEEPALIVE, StandardSocketOptions.SO_REUSEADDR,
        StandardSocketOptions.SO_LINGER, StandardSocketOptions.TCP_NODELAY);

    private final TernSelectorProvider ternProvider;
    private final ChannelKeys keys = new ChannelKeys();
    private final Object readLock = new Object();
    private final Object writeLock = new Object();
    private final Object stateLock = new Object();
    private final Buffers readBuffers = new Buffers();
    private final Buffers writeBuffers = new Buffers();
    private volatile SocketChannel kernel;
    private volatile TcpConnection connection;
    private volatile int state;
    private volatile boolean inputShut;
    private volatile boolean outputShut;
    /**
     * A read or write ran since the last idle sweep ({@link #releaseIfIdle}); written under either I/O lock, read and
     * cleared under both. A new channel starts touched, so a connection gets a whole period before its first use.
     */
    private boolean touched = true;
    /** On its selector's idle-sweep list ({@link TernSelector}); the selecting thread's alone. */
    boolean sweepListed;
    private InetSocketAddress localAddress;
    private InetSocketAddress remoteAddress;
    private int boundPort;
    private boolean bound;
    private Closer closer;
    private Cleaner.Cleanable cleanable;
    private SocketAdaptor adaptor;

    // Options, recorded until a side serves the channel (guarded by stateLock).
    private boolean noDelay;
    private boolean keepAlive;
    private boolean reuseAddress;
    private int linger = -1;
    private int receiveBuffer;
    private int sendBuffer;

    TernSocketChannel(TernSelectorProvider provider) {
        super(provider);
        this.ternProvider = provider;
    }

    /** A connection a Tern listener accepted: connected, blocking (as the JDK hands accepted channels out). */
    TernSocketChannel(TernSelectorProvider provider, TcpConnection accepted, InetSocketAddress local,
                      InetSocketAddress remote, int receiveBuffer) {
        super(provider);
        this.ternProvider = provider;
        this.localAddress = local;
        this.remoteAddress = remote;
        this.bound = true;
        this.receiveBuffer = receiveBuffer;
        this.state = CONNECTED;
        adopt(accepted);
    }

    /** A channel served by the kernel from the start (a UNIX-domain or IPv6 channel, say). */
    static TernSocketChannel kernel(TernSelectorProvider provider, SocketChannel kernelChannel) {
        final TernSocketChannel channel = new TernSocketChannel(provider);
        channel.kernel = kernelChannel;
        provider.countKernelChannel();
        return channel;
    }

    /** A kernel channel a kernel listener accepted, wrapped so that a Tern selector can take it. */
    static TernSocketChannel accepted(TernSelectorProvider provider, SocketChannel kernelChannel) {
        return kernel(provider, kernelChannel);
    }

    private void adopt(TcpConnection opened) {
        connection = opened;
        final NioCounters counters = ternProvider.counters();
        closer = new Closer(opened, counters);
        cleanable = Channels.CLEANER.register(this, closer);
        if (counters != null) {
            counters.add(counters.tcpOpened, 1);
        }
    }

    /** Closes the connection of a channel: explicitly (close) or when it became unreachable (the cleaner). */
    private static final class Closer implements Runnable {
        private final TcpConnection connection;
        private final NioCounters counters;
        volatile boolean explicit;
        volatile boolean abort;

        Closer(TcpConnection connection, NioCounters counters) {
            this.connection = connection;
            this.counters = counters;
        }

        @Override
        public void run() {
            if (abort) {
                connection.abort();
            } else {
                connection.close();
            }
            connection.stopWaiting();
            if (counters != null) {
                counters.add(counters.tcpClosed, 1);
                if (!explicit) {
                    counters.add(counters.tcpAbandoned, 1);
                }
            }
        }
    }

    // ------------------------------------------------------------------------------------------ TernChannel

    @Override
    public SelectableSocket ternSocket() {
        return connection;
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
        if (interestOps == 0) {
            return 0;
        }
        int ops = SelectableSocket.ERROR | SelectableSocket.HANGUP;
        if ((interestOps & SelectionKey.OP_READ) != 0) {
            ops |= SelectableSocket.READ;
        }
        if ((interestOps & (SelectionKey.OP_WRITE | SelectionKey.OP_CONNECT)) != 0) {
            ops |= SelectableSocket.WRITE;
        }
        return ops;
    }

    /** As the JDK's: an error or hang-up makes every interest ready; room to write is "connect" while connecting. */
    @Override
    public int translateReadyOps(int ternReady, int interestOps) {
        if ((ternReady & (SelectableSocket.ERROR | SelectableSocket.HANGUP)) != 0) {
            return interestOps;
        }
        final int current = state;
        int ops = 0;
        if ((ternReady & SelectableSocket.READ) != 0 && current == CONNECTED) {
            ops |= SelectionKey.OP_READ;
        }
        if ((ternReady & SelectableSocket.WRITE) != 0) {
            ops |= current == PENDING ? SelectionKey.OP_CONNECT : current == CONNECTED ? SelectionKey.OP_WRITE : 0;
        }
        return ops & interestOps;
    }

    // ------------------------------------------------------------------------------------------ side

    /** Makes the kernel channel that serves this one from now on, with the options and mode set so far. */
    private SocketChannel becomeKernel() throws IOException {
        final SocketChannel made = ternProvider.kernel().openSocketChannel();
        try {
            made.setOption(StandardSocketOptions.TCP_NODELAY, noDelay);
            made.setOption(StandardSocketOptions.SO_KEEPALIVE, keepAlive);
            made.setOption(StandardSocketOptions.SO_REUSEADDR, reuseAddress);
            made.setOption(StandardSocketOptions.SO_LINGER, linger);
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
        return made;
    }

    /** The kernel channel failed: if it was closed under us (interrupt, async close), so are we. */
    private <E extends IOException> E kernelFailed(E e) {
        final SocketChannel k = kernel;
        if (k != null && !k.isOpen() && isOpen()) {
            try {
                close();
            } catch (IOException ignored) {
                // closing a channel whose kernel side is closed already
            }
        }
        return e;
    }

    private TcpOptions options() {
        TcpOptions options = TcpOptions.DEFAULT.withNoDelay(noDelay);
        if (receiveBuffer > 0 || sendBuffer > 0) {
            options = options.withBuffers(sendBuffer > 0 ? Channels.ringSize(sendBuffer) : 0,
                receiveBuffer > 0 ? Channels.ringSize(receiveBuffer) : 0);
        }
        if (keepAlive) {
            options = options.withKeepalive(0, 0, 0);
        }
        return options;
    }

    // ------------------------------------------------------------------------------------------ bind, connect

    @Override
    public SocketChannel bind(SocketAddress local) throws IOException {
        SocketChannel k;
        synchronized (readLock) {
            synchronized (writeLock) {
                synchronized (stateLock) {
                    ensureOpen();
                    k = kernel;
                    if (k == null) {
                        if (state == PENDING) {
                            throw new ConnectionPendingException();
                        }
                        if (state == CONNECTED) {
                            throw new AlreadyConnectedException();
                        }
                        if (bound) {
                            throw new AlreadyBoundException();
                        }
                        final InetSocketAddress address = local == null ? new InetSocketAddress(0) : Addresses.checked(local);
                        if (ternProvider.rules().listen(Rules.Transport.TCP, address) == Rules.Side.TERN
                            && ternProvider.ternOrFallback() == Rules.Side.TERN) {
                            final NetStack stack = ternProvider.stack();
                            boundPort = address.getPort();
                            bound = true;
                            localAddress = Addresses.socket(stack.address().address(), boundPort);
                            return this;
                        }
                        k = becomeKernel();
                        keys.decided();
                    }
                }
            }
        }
        try {
            k.bind(local);
        } catch (IOException e) {
            throw kernelFailed(e);
        }
        return this;
    }

    @Override
    public boolean connect(SocketAddress remote) throws IOException {
        SocketChannel k;
        final TcpConnection opened;
        synchronized (readLock) {
            synchronized (writeLock) {
                synchronized (stateLock) {
                    ensureOpen();
                    k = kernel;
                    if (k == null) {
                        if (state == CONNECTED) {
                            throw new AlreadyConnectedException();
                        }
                        if (state == PENDING) {
                            throw new ConnectionPendingException();
                        }
                        Objects.requireNonNull(remote, "remote");
                        final boolean tern;
                        if (bound) {
                            tern = true;
                        } else if (!(remote instanceof InetSocketAddress)) {
                            tern = false; // the kernel's channel says what it makes of it
                        } else {
                            final InetSocketAddress inet = Addresses.checked(remote);
                            tern = ternProvider.rules().connect(Rules.Transport.TCP, inet) == Rules.Side.TERN
                                && ternProvider.ternOrFallback() == Rules.Side.TERN;
                        }
                        if (tern) {
                            opened = openConnection(Addresses.checked(remote));
                            k = null;
                        } else {
                            k = becomeKernel();
                            keys.decided();
                            opened = null;
                        }
                    } else {
                        opened = null;
                    }
                }
            }
        }
        if (k != null) {
            try {
                return k.connect(remote);
            } catch (IOException e) {
                throw kernelFailed(e);
            }
        }
        keys.decided();
        if (!isBlocking()) {
            // As the kernel's non-blocking connect to another host (EINPROGRESS): false, even if the handshake is
            // already done by now; OP_CONNECT and finishConnect complete it. Programs that ignore connect's result
            // and wait for OP_CONNECT (common: kernels never complete a remote connect at once) would wait forever.
            return false;
        }
        return awaitConnected(opened);
    }

    private TcpConnection openConnection(InetSocketAddress remote) throws IOException {
        final int port = remote.getPort();
        if (remote.getAddress() instanceof java.net.Inet6Address six && !six.isAnyLocalAddress()) {
            // The rules sent an IPv6 peer here: Tern's stack has IPv6, on every shard.
            final dev.tern.core.net.Ipv6Address address = dev.tern.core.net.Ipv6Address.of(six.getAddress());
            awaitIpv6Addresses(ternProvider.stack());
            final NetStack stack = ternProvider.stackForConnect6(address, port, boundPort);
            awaitIpv6Addresses(stack);
            return opened(stack, remote, () -> stack.connect(address, port, boundPort, options()));
        }
        int address = Addresses.ipv4(remote);
        if (address == 0) {
            address = ternProvider.stack().address().address(); // as the JDK: the wildcard address means this host
        }
        final int ipv4 = address;
        final NetStack stack = ternProvider.stackForConnect(ipv4, port, boundPort);
        return opened(stack, remote, () -> stack.connect(ipv4, port, boundPort, options()));
    }

    /** How a connection is opened on the stack (the family's call). */
    private interface Connect {
        TcpConnection open() throws TernSocketException;
    }

    /** Opens the connection and makes it this channel's, PENDING; closes the channel if the open failed. */
    private TcpConnection opened(NetStack stack, InetSocketAddress remote, Connect connect) throws IOException {
        final TcpConnection opened;
        try {
            opened = connect.open();
        } catch (TernSocketException e) {
            close();
            throw Errors.translate(e);
        }
        adopt(opened);
        remoteAddress = remote;
        localAddress = Addresses.local(opened, stack.address().address());
        bound = true;
        state = PENDING;
        return opened;
    }

    /**
     * A program may connect as soon as it starts, while duplicate address detection still holds the stack's new IPv6
     * addresses back (about a second, RFC 4862 §5.4): the connect waits for it, 3 s at most, rather than fail.
     */
    private static void awaitIpv6Addresses(NetStack stack) throws IOException {
        final long deadline = System.nanoTime() + 3_000_000_000L;
        while (!stack.call(() -> stack.ipv6() == null || stack.ipv6().addresses().settled())
            && System.nanoTime() - deadline < 0) {
            try {
                Thread.sleep(10);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new java.io.InterruptedIOException("interrupted waiting for IPv6 duplicate address detection");
            }
        }
    }

    /** True (and connected) if the handshake is done; throws (and closes) if it failed; false while it goes on. */
    private boolean finishIfConnected(TcpConnection opened) throws IOException {
        if (opened.isConnected()) {
            state = CONNECTED;
            return true;
        }
        if (opened.isEnded() || opened.error() != SocketError.NONE) {
            final int error = opened.error() == SocketError.NONE ? SocketError.CONNECTION_REFUSED : opened.error();
            close();
            throw Errors.translate(TernSocketException.of(error, "tcp connect to " + remoteAddress));
        }
        return false;
    }

    private boolean awaitConnected(TcpConnection opened) throws IOException {
        boolean completed = false;
        try {
            begin();
            while (isOpen()) {
                try {
                    if (finishIfConnected(opened)) {
                        completed = true;
                        break;
                    }
                } catch (IOException failed) {
                    completed = true; // the connect failed and closed the channel: that, not an async close
                    throw failed;
                }
                opened.awaitReady(SelectableSocket.WRITE, Channels.sliceDeadline());
            }
            return completed;
        } finally {
            end(completed);
        }
    }

    @Override
    public boolean finishConnect() throws IOException {
        final SocketChannel k = kernel;
        if (k != null) {
            try {
                return k.finishConnect();
            } catch (IOException e) {
                throw kernelFailed(e);
            }
        }
        synchronized (readLock) {
            synchronized (writeLock) {
                ensureOpen();
                if (state == CONNECTED) {
                    return true;
                }
                if (state != PENDING) {
                    throw new NoConnectionPendingException();
                }
                return isBlocking() ? awaitConnected(connection) : finishIfConnected(connection);
            }
        }
    }

    @Override
    public boolean isConnected() {
        final SocketChannel k = kernel;
        return k != null ? k.isConnected() : state == CONNECTED;
    }

    @Override
    public boolean isConnectionPending() {
        final SocketChannel k = kernel;
        return k != null ? k.isConnectionPending() : state == PENDING;
    }

    @Override
    public SocketAddress getLocalAddress() throws IOException {
        final SocketChannel k = kernel;
        if (k != null) {
            return k.getLocalAddress();
        }
        ensureOpen();
        synchronized (stateLock) {
            return localAddress;
        }
    }

    @Override
    public SocketAddress getRemoteAddress() throws IOException {
        final SocketChannel k = kernel;
        if (k != null) {
            return k.getRemoteAddress();
        }
        ensureOpen();
        synchronized (stateLock) {
            return remoteAddress;
        }
    }

    private void ensureOpen() throws ClosedChannelException {
        Channels.ensureOpen(isOpen());
    }

    private TcpConnection connectedTern() throws ClosedChannelException {
        ensureOpen();
        if (state != CONNECTED) {
            throw new NotYetConnectedException();
        }
        return connection;
    }

    // ------------------------------------------------------------------------------------------ half-close

    @Override
    public SocketChannel shutdownInput() throws IOException {
        final SocketChannel k = kernel;
        if (k != null) {
            k.shutdownInput();
            return this;
        }
        synchronized (stateLock) {
            connectedTern();
            inputShut = true;
        }
        return this;
    }

    @Override
    public SocketChannel shutdownOutput() throws IOException {
        final SocketChannel k = kernel;
        if (k != null) {
            k.shutdownOutput();
            return this;
        }
        synchronized (stateLock) {
            final TcpConnection c = connectedTern();
            if (!outputShut) {
                outputShut = true;
                c.shutdownOutput();
            }
        }
        return this;
    }

    /** Bytes readable now without blocking (a classic socket's {@code available()}). */
    int available() throws IOException {
        final SocketChannel k = kernel;
        if (k != null) {
            return k.socket().getInputStream().available();
        }
        final TcpConnection c = connection;
        return c == null || inputShut ? 0 : c.available();
    }

    boolean isInputShutdown() {
        return inputShut;
    }

    boolean isOutputShutdown() {
        return outputShut;
    }

    // ------------------------------------------------------------------------------------------ read

    @Override
    public int read(ByteBuffer destination) throws IOException {
        Objects.requireNonNull(destination, "destination");
        final SocketChannel k = kernel;
        if (k != null) {
            try {
                return k.read(destination);
            } catch (IOException e) {
                throw kernelFailed(e);
            }
        }
        synchronized (readLock) {
            final TcpConnection c = connectedTern();
            if (destination.isReadOnly()) {
                throw new IllegalArgumentException("Read-only buffer");
            }
            if (inputShut) {
                return -1;
            }
            if (!destination.hasRemaining()) {
                return 0;
            }
            return isBlocking() ? readBlocking(c, destination) : readOnce(c, destination);
        }
    }

    private int readOnce(TcpConnection c, ByteBuffer destination) throws IOException {
        touched = true;
        final int position = destination.position();
        final int n;
        try {
            n = c.read(readBuffers.segment(destination), Buffers.offset(destination), destination.limit() - position);
        } catch (TernSocketException e) {
            throw Errors.translate(e);
        }
        if (n > 0) {
            destination.position(position + n);
        }
        return n;
    }

    private int readBlocking(TcpConnection c, ByteBuffer destination) throws IOException {
        int n = 0;
        try {
            begin();
            while ((n = readOnce(c, destination)) == 0 && isOpen() && !inputShut) {
                c.awaitReady(SelectableSocket.READ, Channels.sliceDeadline());
            }
            return n == 0 && inputShut ? -1 : n;
        } finally {
            end(n != 0 || inputShut);
        }
    }

    /**
     * A blocking read that gives up after {@code timeoutMs} with a {@link java.net.SocketTimeoutException}: the
     * adaptor's stream with {@code SO_TIMEOUT} set.
     */
    int readWithin(ByteBuffer destination, int timeoutMs) throws IOException {
        final SocketChannel k = kernel;
        if (k != null) {
            k.socket().setSoTimeout(timeoutMs);
            final int n = k.socket().getInputStream().read(destination.array(),
                destination.arrayOffset() + destination.position(), destination.remaining());
            if (n > 0) {
                destination.position(destination.position() + n);
            }
            return n;
        }
        if (!isBlocking()) {
            throw new java.nio.channels.IllegalBlockingModeException();
        }
        synchronized (readLock) {
            final TcpConnection c = connectedTern();
            if (inputShut) {
                return -1;
            }
            final long deadline = System.nanoTime() + timeoutMs * 1_000_000L;
            int n = 0;
            try {
                begin();
                while ((n = readOnce(c, destination)) == 0 && isOpen() && !inputShut) {
                    final long now = System.nanoTime();
                    if (deadline - now <= 0) {
                        throw SocketAdaptor.timedOut();
                    }
                    c.awaitReady(SelectableSocket.READ, Math.min(deadline, now + Channels.WAIT_SLICE_NS));
                }
                return n == 0 && inputShut ? -1 : n;
            } finally {
                end(n != 0 || inputShut);
            }
        }
    }

    @Override
    public long read(ByteBuffer[] destinations, int offset, int length) throws IOException {
        Objects.checkFromIndexSize(offset, length, destinations.length);
        final SocketChannel k = kernel;
        if (k != null) {
            try {
                return k.read(destinations, offset, length);
            } catch (IOException e) {
                throw kernelFailed(e);
            }
        }
        for (int i = offset; i < offset + length; i++) {
            if (destinations[i].isReadOnly()) {
                throw new IllegalArgumentException("Read-only buffer");
            }
        }
        synchronized (readLock) {
            final TcpConnection c = connectedTern();
            if (inputShut) {
                return -1;
            }
            long total = 0;
            for (int i = offset; i < offset + length; i++) {
                final ByteBuffer destination = destinations[i];
                if (!destination.hasRemaining()) {
                    continue;
                }
                // Only the first read may wait; the rest take what is already there.
                final int n = total == 0 && isBlocking() ? readBlocking(c, destination) : readOnce(c, destination);
                if (n < 0) {
                    return total == 0 ? -1 : total;
                }
                total += n;
                if (destination.hasRemaining()) {
                    break;
                }
            }
            return total;
        }
    }

    // ------------------------------------------------------------------------------------------ write

    @Override
    public int write(ByteBuffer source) throws IOException {
        Objects.requireNonNull(source, "source");
        final SocketChannel k = kernel;
        if (k != null) {
            try {
                return k.write(source);
            } catch (IOException e) {
                throw kernelFailed(e);
            }
        }
        synchronized (writeLock) {
            final TcpConnection c = connectedTern();
            if (outputShut) {
                throw new ClosedChannelException();
            }
            return isBlocking() ? writeBlocking(c, source) : writeOnce(c, source);
        }
    }

    private int writeOnce(TcpConnection c, ByteBuffer source) throws IOException {
        touched = true;
        final int position = source.position();
        final int length = source.limit() - position;
        if (length == 0) {
            return 0;
        }
        if (c.isEnded()) {
            throwIfFailed(c);
            throw new SocketException("Broken pipe (the connection is closed)");
        }
        final int n;
        try {
            n = c.write(writeBuffers.segment(source), Buffers.offset(source), length);
        } catch (TernSocketException e) {
            throw Errors.translate(e);
        }
        source.position(position + n);
        return n;
    }

    private static void throwIfFailed(TcpConnection c) throws IOException {
        if (c.error() != SocketError.NONE) {
            throw Errors.translate(TernSocketException.of(c.error(), "tcp write"));
        }
    }

    private int writeBlocking(TcpConnection c, ByteBuffer source) throws IOException {
        int written = 0;
        try {
            begin();
            while (source.hasRemaining() && isOpen()) {
                final int n = writeOnce(c, source);
                written += n;
                if (n == 0 && source.hasRemaining()) {
                    c.awaitReady(SelectableSocket.WRITE, Channels.sliceDeadline());
                }
            }
            return written;
        } finally {
            end(!source.hasRemaining());
        }
    }

    @Override
    public long write(ByteBuffer[] sources, int offset, int length) throws IOException {
        Objects.checkFromIndexSize(offset, length, sources.length);
        final SocketChannel k = kernel;
        if (k != null) {
            try {
                return k.write(sources, offset, length);
            } catch (IOException e) {
                throw kernelFailed(e);
            }
        }
        synchronized (writeLock) {
            final TcpConnection c = connectedTern();
            if (outputShut) {
                throw new ClosedChannelException();
            }
            long total = 0;
            final boolean blocking = isBlocking();
            for (int i = offset; i < offset + length; i++) {
                final ByteBuffer source = sources[i];
                total += blocking ? writeBlocking(c, source) : writeOnce(c, source);
                if (source.hasRemaining()) {
                    break;
                }
            }
            return total;
        }
    }

    /** Whether the channel is open on Tern and its connection holds rings now: worth a look from the idle sweep. */
    boolean holdsRings() {
        final TcpConnection c = connection;
        return c != null && kernel == null && c.holdsBuffers() && isOpen();
    }

    /**
     * A selector's idle sweep ({@link TernSelectorProvider#releaseIdleBuffersAfter}): if neither a read nor a write ran
     * since the previous sweep, the connection lets go of its rings ({@link TcpConnection#letGoIfIdle}, which refuses
     * while bytes wait to be read or acknowledged) and is returned, for the sweep to hand the rings back to the stack
     * with the other idle ones in one round trip ({@link TcpConnection#releaseLetGo}); otherwise the mark is cleared
     * for the next sweep and null returned. Taking both I/O locks is the handshake letting go needs: no read or write
     * holds a ring meanwhile. The channel is registered with the selector, so it is non-blocking and the locks are
     * held only for a call's length. Cold path: once per sweep for a connection that holds rings.
     */
    TcpConnection letGoIfIdle() {
        if (!holdsRings()) {
            return null;
        }
        final TcpConnection c = connection;
        synchronized (readLock) {
            synchronized (writeLock) {
                if (touched) {
                    touched = false;
                    return null;
                }
                return c.letGoIfIdle() ? c : null;
            }
        }
    }

    // ------------------------------------------------------------------------------------------ options

    @Override
    public <T> SocketChannel setOption(SocketOption<T> name, T value) throws IOException {
        final SocketChannel k = kernel;
        if (k != null) {
            k.setOption(name, value);
            return this;
        }
        Channels.checkOption(name, value, TERN_OPTIONS);
        synchronized (stateLock) {
            ensureOpen();
            final TcpConnection c = connection;
            try {
                if (name == StandardSocketOptions.TCP_NODELAY) {
                    noDelay = (Boolean) value;
                    if (c != null) {
                        c.noDelay(noDelay);
                    }
                } else if (name == StandardSocketOptions.SO_KEEPALIVE) {
                    keepAlive = (Boolean) value;
                    if (c != null) {
                        final var config = c.stack().tcp().config();
                        c.keepalive(keepAlive, config.keepaliveIdleNs(), config.keepaliveIntervalNs(), config.keepaliveProbes());
                    }
                } else if (name == StandardSocketOptions.SO_LINGER) {
                    final int seconds = (Integer) value;
                    linger = seconds < 0 ? -1 : Math.min(seconds, 65535);
                } else if (name == StandardSocketOptions.SO_REUSEADDR) {
                    reuseAddress = (Boolean) value;
                } else if (name == StandardSocketOptions.SO_RCVBUF || name == StandardSocketOptions.SO_SNDBUF) {
                    final int size = (Integer) value;
                    if (size <= 0) {
                        throw new IllegalArgumentException("Invalid " + (name == StandardSocketOptions.SO_RCVBUF
                            ? "receive" : "send") + " buffer size: " + size);
                    }
                    // A hint, as for the kernel: it sizes the rings of the connection made by the next connect.
                    if (name == StandardSocketOptions.SO_RCVBUF) {
                        receiveBuffer = size;
                    } else {
                        sendBuffer = size;
                    }
                }
            } catch (TernSocketException e) {
                throw Errors.translate(e);
            }
        }
        return this;
    }

    @Override
    @SuppressWarnings("unchecked")
    public <T> T getOption(SocketOption<T> name) throws IOException {
        final SocketChannel k = kernel;
        if (k != null) {
            return k.getOption(name);
        }
        Channels.checkSupported(name, TERN_OPTIONS);
        synchronized (stateLock) {
            ensureOpen();
            final Object value;
            if (name == StandardSocketOptions.TCP_NODELAY) {
                value = noDelay;
            } else if (name == StandardSocketOptions.SO_KEEPALIVE) {
                value = keepAlive;
            } else if (name == StandardSocketOptions.SO_LINGER) {
                value = linger;
            } else if (name == StandardSocketOptions.SO_REUSEADDR) {
                value = reuseAddress;
            } else if (name == StandardSocketOptions.SO_RCVBUF) {
                value = receiveBuffer > 0 ? Channels.ringSize(receiveBuffer) : defaultBuffer(true);
            } else {
                value = sendBuffer > 0 ? Channels.ringSize(sendBuffer) : defaultBuffer(false);
            }
            return (T) value;
        }
    }

    private int defaultBuffer(boolean receive) throws IOException {
        final var config = ternProvider.stack().tcp().config();
        return receive ? config.receiveBufferSize() : config.sendBufferSize();
    }

    @Override
    public Set<SocketOption<?>> supportedOptions() {
        final SocketChannel k = kernel;
        return k != null ? k.supportedOptions() : TERN_OPTIONS;
    }

    // ------------------------------------------------------------------------------------------ mode, close

    @Override
    protected void implConfigureBlocking(boolean block) throws IOException {
        final SocketChannel k = kernel;
        if (k != null) {
            k.configureBlocking(block);
        }
    }

    @Override
    protected void implCloseSelectableChannel() throws IOException {
        final SocketChannel k = kernel;
        if (k != null) {
            k.close();
        }
        final Closer c;
        synchronized (stateLock) {
            c = closer;
        }
        if (c != null) {
            c.explicit = true;
            c.abort = linger == 0; // SO_LINGER 0: a reset, as the kernel does
            if (linger > 0 && isBlocking()) {
                // SO_LINGER above 0 on a blocking channel: close waits until the peer has acknowledged the data and
                // the FIN, or the linger time has passed (as Linux's close(2); the JDK leaves non-blocking undefined).
                c.connection.closeAndLinger(linger * 1_000_000_000L);
            }
            cleanable.clean();
        }
    }

    @Override
    public Socket socket() {
        synchronized (stateLock) {
            if (adaptor == null) {
                adaptor = SocketAdaptor.of(this);
            }
            return adaptor;
        }
    }

    @Override
    public String toString() {
        final StringBuilder text = new StringBuilder(getClass().getSimpleName()).append('[');
        if (!isOpen()) {
            text.append("closed");
        } else if (kernel != null) {
            text.append("kernel ").append(kernel);
        } else {
            text.append(state == CONNECTED ? "connected" : state == PENDING ? "connection-pending" : "unconnected");
            if (localAddress != null) {
                text.append(" local=").append(localAddress);
            }
            if (remoteAddress != null) {
                text.append(" remote=").append(remoteAddress);
            }
        }
        return text.append(']').toString();
    }
}
