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
import java.net.SocketOptions;
import java.net.StandardSocketOptions;
import java.nio.ByteBuffer;
import java.nio.channels.MembershipKey;
import java.util.HashMap;
import java.util.Map;
import java.util.Set;

/**
 * The classic {@code DatagramSocket} and {@code MulticastSocket} on Tern's datagram channel: a
 * {@link DatagramSocketImpl} that {@code tern exec}'s agent installs with
 * {@code DatagramSocket.setDatagramSocketImplFactory} (the JDK's only hook for them; deprecated, one per JVM). Each
 * socket becomes a {@link TernDatagramChannel} of the system-wide provider, so the rules decide Tern or the kernel.
 *
 * <p>{@code receive} fills the packet's array from its offset to the array's end (the JDK's own implementation keeps
 * the length the packet was made with, which it reaches through internals) and waits at most {@code SO_TIMEOUT}.
 * {@code peek} is not supported: the JDK calls it only for an implementation that cannot connect, and this one can.
 */
final class TernDatagramSocketImpl extends DatagramSocketImpl {
    private final TernSelectorProvider provider;
    private TernDatagramChannel channel;
    private int timeoutMs;
    private final Map<InetAddress, MembershipKey> memberships = new HashMap<>();

    TernDatagramSocketImpl(TernSelectorProvider provider) {
        this.provider = provider;
    }

    @Override
    protected void create() throws SocketException {
        try {
            // No family, as the JDK's DatagramSocket: dual-stack unless java.net.preferIPv4Stack.
            channel = (TernDatagramChannel) provider.openDatagramChannel();
        } catch (IOException e) {
            throw new SocketException(e.getMessage());
        }
    }

    @Override
    protected void bind(int port, InetAddress address) throws SocketException {
        try {
            channel.bind(new InetSocketAddress(address, port));
            localPort = ((InetSocketAddress) channel.getLocalAddress()).getPort();
        } catch (SocketException e) {
            throw e;
        } catch (IOException e) {
            throw new SocketException(e.getMessage());
        }
    }

    @Override
    protected void send(DatagramPacket packet) throws IOException {
        final ByteBuffer data = ByteBuffer.wrap(packet.getData(), packet.getOffset(), packet.getLength());
        if (packet.getAddress() == null) {
            channel.write(data);
        } else {
            channel.send(data, packet.getSocketAddress());
        }
    }

    @Override
    protected void connect(InetAddress address, int port) throws SocketException {
        try {
            channel.connect(new InetSocketAddress(address, port));
        } catch (SocketException e) {
            throw e;
        } catch (IOException e) {
            throw new SocketException(e.getMessage());
        }
    }

    @Override
    protected void disconnect() {
        try {
            channel.disconnect();
        } catch (IOException e) {
            // disconnect throws nothing: the channel is closed, and so disconnected
        }
    }

    @Override
    protected int peek(InetAddress address) throws IOException {
        throw new SocketException("peek is not supported on Tern");
    }

    @Override
    protected int peekData(DatagramPacket packet) throws IOException {
        throw new SocketException("peek is not supported on Tern");
    }

    @Override
    protected void receive(DatagramPacket packet) throws IOException {
        final ByteBuffer buffer = ByteBuffer.wrap(packet.getData(), packet.getOffset(),
            packet.getData().length - packet.getOffset());
        final SocketAddress source = channel.receiveWithin(buffer, timeoutMs);
        packet.setLength(buffer.position() - packet.getOffset());
        packet.setSocketAddress(source);
    }

    @Override
    @Deprecated
    protected void setTTL(byte ttl) throws IOException {
        setTimeToLive(ttl & 0xFF);
    }

    @Override
    @Deprecated
    protected byte getTTL() throws IOException {
        return (byte) getTimeToLive();
    }

    @Override
    protected void setTimeToLive(int ttl) throws IOException {
        channel.setOption(StandardSocketOptions.IP_MULTICAST_TTL, ttl);
    }

    @Override
    protected int getTimeToLive() throws IOException {
        return channel.getOption(StandardSocketOptions.IP_MULTICAST_TTL);
    }

    @Override
    protected void join(InetAddress group) throws IOException {
        joinGroup(new InetSocketAddress(group, 0), null);
    }

    @Override
    protected void leave(InetAddress group) throws IOException {
        leaveGroup(new InetSocketAddress(group, 0), null);
    }

    @Override
    protected void joinGroup(SocketAddress group, NetworkInterface networkInterface) throws IOException {
        final InetAddress address = ((InetSocketAddress) group).getAddress();
        if (memberships.containsKey(address)) {
            throw new SocketException("Already a member of " + address.getHostAddress());
        }
        memberships.put(address, channel.joinAnyInterface(address, networkInterface));
    }

    @Override
    protected void leaveGroup(SocketAddress group, NetworkInterface networkInterface) throws IOException {
        final MembershipKey key = memberships.remove(((InetSocketAddress) group).getAddress());
        if (key == null) {
            throw new SocketException("Not a member of " + group);
        }
        key.drop();
    }

    @Override
    protected void close() {
        try {
            channel.close();
        } catch (IOException e) {
            // close throws nothing
        }
    }

    // ------------------------------------------------------------------------------------------ options

    @Override
    public void setOption(int id, Object value) throws SocketException {
        try {
            switch (id) {
                case SocketOptions.SO_TIMEOUT -> timeoutMs = (Integer) value;
                case SocketOptions.SO_REUSEADDR -> channel.setOption(StandardSocketOptions.SO_REUSEADDR, (Boolean) value);
                case SocketOptions.SO_BROADCAST -> channel.setOption(StandardSocketOptions.SO_BROADCAST, (Boolean) value);
                case SocketOptions.SO_RCVBUF -> channel.setOption(StandardSocketOptions.SO_RCVBUF, (Integer) value);
                case SocketOptions.SO_SNDBUF -> channel.setOption(StandardSocketOptions.SO_SNDBUF, (Integer) value);
                case SocketOptions.IP_TOS -> channel.setOption(StandardSocketOptions.IP_TOS, (Integer) value);
                // The classic option means "loopback disabled" (MulticastSocket.setLoopbackMode(disable)).
                case SocketOptions.IP_MULTICAST_LOOP ->
                    channel.setOption(StandardSocketOptions.IP_MULTICAST_LOOP, !(Boolean) value);
                case SocketOptions.IP_MULTICAST_IF2 ->
                    channel.setOption(StandardSocketOptions.IP_MULTICAST_IF, (NetworkInterface) value);
                case SocketOptions.IP_MULTICAST_IF -> channel.setOption(StandardSocketOptions.IP_MULTICAST_IF,
                    NetworkInterface.getByInetAddress((InetAddress) value));
                default -> throw new SocketException("unknown option " + id);
            }
        } catch (UnsupportedOperationException e) {
            throw new SocketException(e.getMessage());
        } catch (SocketException e) {
            throw e;
        } catch (IOException e) {
            throw new SocketException(e.getMessage());
        }
    }

    @Override
    public Object getOption(int id) throws SocketException {
        try {
            return switch (id) {
                case SocketOptions.SO_TIMEOUT -> timeoutMs;
                case SocketOptions.SO_REUSEADDR -> channel.getOption(StandardSocketOptions.SO_REUSEADDR);
                case SocketOptions.SO_BROADCAST -> channel.getOption(StandardSocketOptions.SO_BROADCAST);
                case SocketOptions.SO_RCVBUF -> channel.getOption(StandardSocketOptions.SO_RCVBUF);
                case SocketOptions.SO_SNDBUF -> channel.getOption(StandardSocketOptions.SO_SNDBUF);
                case SocketOptions.IP_TOS -> channel.getOption(StandardSocketOptions.IP_TOS);
                case SocketOptions.IP_MULTICAST_LOOP -> !channel.getOption(StandardSocketOptions.IP_MULTICAST_LOOP);
                case SocketOptions.IP_MULTICAST_IF2 -> channel.getOption(StandardSocketOptions.IP_MULTICAST_IF);
                case SocketOptions.IP_MULTICAST_IF -> new InetSocketAddress(0).getAddress();
                case SocketOptions.SO_BINDADDR -> channel.getLocalAddress() instanceof InetSocketAddress local
                    ? local.getAddress() : new InetSocketAddress(0).getAddress();
                default -> throw new SocketException("unknown option " + id);
            };
        } catch (UnsupportedOperationException e) {
            throw new SocketException(e.getMessage());
        } catch (SocketException e) {
            throw e;
        } catch (IOException e) {
            throw new SocketException(e.getMessage());
        }
    }

    @Override
    protected <T> void setOption(SocketOption<T> name, T value) throws IOException {
        if (name == StandardSocketOptions.IP_MULTICAST_LOOP || name == StandardSocketOptions.IP_MULTICAST_TTL
            || name == StandardSocketOptions.IP_MULTICAST_IF || channel.supportedOptions().contains(name)) {
            channel.setOption(name, value);
            return;
        }
        throw new UnsupportedOperationException("'" + name + "' not supported");
    }

    @Override
    protected <T> T getOption(SocketOption<T> name) throws IOException {
        return channel.getOption(name);
    }

    @Override
    protected Set<SocketOption<?>> supportedOptions() {
        return channel.supportedOptions();
    }

    /** Installs Tern's datagram sockets for {@code new DatagramSocket()}; false if a factory was set already. */
    @SuppressWarnings("deprecation") // the only hook the JDK has for the classic datagram sockets
    static boolean install() {
        try {
            DatagramSocket.setDatagramSocketImplFactory(
                () -> new TernDatagramSocketImpl((TernSelectorProvider) java.nio.channels.spi.SelectorProvider.provider()));
            return true;
        } catch (IOException | IllegalStateException e) {
            return false;
        }
    }
}
