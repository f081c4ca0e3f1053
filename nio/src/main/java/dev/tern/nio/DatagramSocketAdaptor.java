package dev.tern.nio;

import java.io.IOException;
import java.net.DatagramPacket;
import java.net.DatagramSocket;
import java.net.DatagramSocketImpl;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.NetworkInterface;
import java.net.SocketAddress;
import java.net.SocketException;
import java.net.SocketOption;
import java.net.SocketTimeoutException;
import java.net.StandardSocketOptions;
import java.nio.ByteBuffer;
import java.nio.channels.DatagramChannel;
import java.nio.channels.IllegalBlockingModeException;
import java.nio.channels.MembershipKey;
import java.util.Set;

/**
 * The {@link DatagramSocket} that {@link TernDatagramChannel#socket()} hands out: every call goes to the channel.
 * {@link #receive} waits at most {@code SO_TIMEOUT} (the channel must be in blocking mode, as for the JDK's adaptor).
 * The JDK's constructor wants an implementation object; it gets one that refuses everything
 * ({@link Unused}), since nothing reaches it.
 */
final class DatagramSocketAdaptor extends DatagramSocket {
    private final TernDatagramChannel channel;
    private volatile int timeoutMs;

    private DatagramSocketAdaptor(TernDatagramChannel channel) {
        super(new Unused());
        this.channel = channel;
    }

    static DatagramSocketAdaptor of(TernDatagramChannel channel) {
        return new DatagramSocketAdaptor(channel);
    }

    @Override
    public DatagramChannel getChannel() {
        return channel;
    }

    @Override
    public synchronized void bind(SocketAddress local) throws SocketException {
        try {
            channel.bind(local);
        } catch (SocketException e) {
            throw e;
        } catch (IOException e) {
            throw new SocketException(e.getMessage());
        }
    }

    @Override
    public void connect(InetAddress address, int port) {
        try {
            channel.connect(new InetSocketAddress(address, port));
        } catch (IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }

    @Override
    public void connect(SocketAddress address) throws SocketException {
        try {
            channel.connect(address);
        } catch (SocketException e) {
            throw e;
        } catch (IOException e) {
            throw new SocketException(e.getMessage());
        }
    }

    @Override
    public void disconnect() {
        try {
            channel.disconnect();
        } catch (IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }

    @Override
    public boolean isBound() {
        return getLocalSocketAddress() != null;
    }

    @Override
    public boolean isConnected() {
        return channel.isConnected();
    }

    @Override
    public InetAddress getInetAddress() {
        final SocketAddress remote = getRemoteSocketAddress();
        return remote instanceof InetSocketAddress inet ? inet.getAddress() : null;
    }

    @Override
    public int getPort() {
        final SocketAddress remote = getRemoteSocketAddress();
        return remote instanceof InetSocketAddress inet ? inet.getPort() : -1;
    }

    @Override
    public SocketAddress getRemoteSocketAddress() {
        try {
            return channel.getRemoteAddress();
        } catch (IOException e) {
            return null;
        }
    }

    @Override
    public SocketAddress getLocalSocketAddress() {
        try {
            return channel.getLocalAddress();
        } catch (IOException e) {
            return null;
        }
    }

    @Override
    public InetAddress getLocalAddress() {
        final SocketAddress local = getLocalSocketAddress();
        return local instanceof InetSocketAddress inet ? inet.getAddress() : null;
    }

    @Override
    public int getLocalPort() {
        final SocketAddress local = getLocalSocketAddress();
        return local instanceof InetSocketAddress inet ? inet.getPort() : isClosed() ? -1 : 0;
    }

    @Override
    public void send(DatagramPacket packet) throws IOException {
        if (!channel.isBlocking()) {
            throw new IllegalBlockingModeException();
        }
        final ByteBuffer data = ByteBuffer.wrap(packet.getData(), packet.getOffset(), packet.getLength());
        final SocketAddress target = packet.getAddress() == null ? channel.getRemoteAddress() : packet.getSocketAddress();
        if (target == null) {
            throw new IllegalArgumentException("Address not set");
        }
        channel.send(data, target);
    }

    @Override
    public void receive(DatagramPacket packet) throws IOException {
        if (!channel.isBlocking()) {
            throw new IllegalBlockingModeException();
        }
        final ByteBuffer buffer = ByteBuffer.wrap(packet.getData(), packet.getOffset(), packet.getData().length - packet.getOffset());
        final int timeout = timeoutMs;
        SocketAddress source;
        if (timeout == 0) {
            source = channel.receive(buffer);
        } else {
            final long deadline = System.nanoTime() + timeout * 1_000_000L;
            channel.configureBlocking(false);
            try {
                while ((source = channel.receive(buffer)) == null) {
                    if (System.nanoTime() - deadline > 0) {
                        throw new SocketTimeoutException("Receive timed out");
                    }
                    Thread.onSpinWait();
                }
            } finally {
                if (channel.isOpen()) {
                    channel.configureBlocking(true);
                }
            }
        }
        packet.setLength(buffer.position() - packet.getOffset());
        packet.setSocketAddress(source);
    }

    @Override
    public void setSoTimeout(int timeout) throws SocketException {
        if (timeout < 0) {
            throw new IllegalArgumentException("timeout < 0");
        }
        timeoutMs = timeout;
    }

    @Override
    public int getSoTimeout() {
        return timeoutMs;
    }

    private <T> void set(SocketOption<T> option, T value) throws SocketException {
        try {
            channel.setOption(option, value);
        } catch (SocketException e) {
            throw e;
        } catch (IOException e) {
            throw new SocketException(e.getMessage());
        }
    }

    private <T> T get(SocketOption<T> option) throws SocketException {
        try {
            return channel.getOption(option);
        } catch (SocketException e) {
            throw e;
        } catch (IOException e) {
            throw new SocketException(e.getMessage());
        }
    }

    @Override
    public void setSendBufferSize(int size) throws SocketException {
        set(StandardSocketOptions.SO_SNDBUF, size);
    }

    @Override
    public int getSendBufferSize() throws SocketException {
        return get(StandardSocketOptions.SO_SNDBUF);
    }

    @Override
    public void setReceiveBufferSize(int size) throws SocketException {
        set(StandardSocketOptions.SO_RCVBUF, size);
    }

    @Override
    public int getReceiveBufferSize() throws SocketException {
        return get(StandardSocketOptions.SO_RCVBUF);
    }

    @Override
    public void setReuseAddress(boolean on) throws SocketException {
        set(StandardSocketOptions.SO_REUSEADDR, on);
    }

    @Override
    public boolean getReuseAddress() throws SocketException {
        return get(StandardSocketOptions.SO_REUSEADDR);
    }

    @Override
    public void setBroadcast(boolean on) throws SocketException {
        set(StandardSocketOptions.SO_BROADCAST, on);
    }

    @Override
    public boolean getBroadcast() throws SocketException {
        return get(StandardSocketOptions.SO_BROADCAST);
    }

    @Override
    public void setTrafficClass(int tc) throws SocketException {
        set(StandardSocketOptions.IP_TOS, tc);
    }

    @Override
    public int getTrafficClass() throws SocketException {
        return get(StandardSocketOptions.IP_TOS);
    }

    @Override
    public <T> DatagramSocket setOption(SocketOption<T> name, T value) throws IOException {
        channel.setOption(name, value);
        return this;
    }

    @Override
    public <T> T getOption(SocketOption<T> name) throws IOException {
        return channel.getOption(name);
    }

    @Override
    public Set<SocketOption<?>> supportedOptions() {
        return channel.supportedOptions();
    }

    @Override
    public void joinGroup(SocketAddress group, NetworkInterface networkInterface) throws IOException {
        if (!(group instanceof InetSocketAddress inet)) {
            throw new IllegalArgumentException("Unsupported address type");
        }
        channel.join(inet.getAddress(), networkInterface);
    }

    @Override
    public void leaveGroup(SocketAddress group, NetworkInterface networkInterface) throws IOException {
        if (!(group instanceof InetSocketAddress inet)) {
            throw new IllegalArgumentException("Unsupported address type");
        }
        final MembershipKey key = channel.join(inet.getAddress(), networkInterface);
        key.drop();
    }

    @Override
    public boolean isClosed() {
        return !channel.isOpen();
    }

    @Override
    public void close() {
        try {
            channel.close();
        } catch (IOException ignored) {
            // DatagramSocket.close throws nothing
        }
    }

    /** The implementation the JDK's constructor requires; never reached, every call is the channel's. */
    private static final class Unused extends DatagramSocketImpl {
        private static UnsupportedOperationException unused() {
            return new UnsupportedOperationException("a Tern datagram socket adaptor goes through its channel");
        }

        @Override
        protected void create() {
            throw unused();
        }

        @Override
        protected void bind(int port, InetAddress address) {
            throw unused();
        }

        @Override
        protected void send(DatagramPacket packet) {
            throw unused();
        }

        @Override
        protected int peek(InetAddress address) {
            throw unused();
        }

        @Override
        protected int peekData(DatagramPacket packet) {
            throw unused();
        }

        @Override
        protected void receive(DatagramPacket packet) {
            throw unused();
        }

        @Override
        @Deprecated
        protected void setTTL(byte ttl) {
            throw unused();
        }

        @Override
        @Deprecated
        protected byte getTTL() {
            throw unused();
        }

        @Override
        protected void setTimeToLive(int ttl) {
            throw unused();
        }

        @Override
        protected int getTimeToLive() {
            throw unused();
        }

        @Override
        protected void join(InetAddress address) {
            throw unused();
        }

        @Override
        protected void leave(InetAddress address) {
            throw unused();
        }

        @Override
        protected void joinGroup(SocketAddress address, NetworkInterface networkInterface) {
            throw unused();
        }

        @Override
        protected void leaveGroup(SocketAddress address, NetworkInterface networkInterface) {
            throw unused();
        }

        @Override
        protected void close() {
        }

        @Override
        public void setOption(int optionId, Object value) {
            throw unused();
        }

        @Override
        public Object getOption(int optionId) {
            throw unused();
        }
    }
}
