package dev.tern.cli;

import dev.tern.ethernet.memory.MemoryWire;
import dev.tern.ethernet.pcap.PcapWriter;
import dev.tern.stack.NetStack;

/**
 * What a network command runs on: its stack, and on the memory wire the peer stack in the same process. Both are
 * polled from the command's thread.
 */
final class Network implements AutoCloseable {
    /** The ports the memory-wire peer answers echo (RFC 862, UDP and TCP) and discard (RFC 863, TCP) on. */
    static final int PEER_ECHO_PORT = 7;
    static final int PEER_DISCARD_PORT = 9;

    final NetStack stack;
    final NetStack peer;
    private final MemoryWire wire;
    private final PcapWriter pcap;
    private final java.util.List<UdpEchoService> udpEcho = new java.util.ArrayList<>();
    private final java.util.List<TcpService> tcpServices = new java.util.ArrayList<>();

    Network(NetStack stack, NetStack peer, MemoryWire wire, PcapWriter pcap) {
        this.stack = stack;
        this.peer = peer;
        this.wire = wire;
        this.pcap = pcap;
        if (peer != null) {
            try {
                udpEcho.add(new UdpEchoService(peer, PEER_ECHO_PORT));
                tcpServices.add(new TcpService.Echo(peer, PEER_ECHO_PORT));
                tcpServices.add(new TcpService.Discard(peer, PEER_DISCARD_PORT));
            } catch (dev.tern.stack.TernSocketException e) {
                throw new CommandFailure("memory peer: cannot start its services: " + e.getMessage(), e);
            }
        }
    }

    /** Runs UDP echo on {@code port} of the command's own stack (tern serve --udp-echo). */
    void serveUdpEcho(int port) {
        try {
            udpEcho.add(new UdpEchoService(stack, port));
        } catch (dev.tern.stack.TernSocketException e) {
            throw new CommandFailure("udp echo on port " + port + ": " + e.getMessage(), e);
        }
    }

    /** Runs a TCP service on the command's own stack (tern serve --echo, --discard, --http). */
    void serve(TcpService service) {
        tcpServices.add(service);
    }

    /** One turn of every stack's loop and every service; returns the work done. */
    int poll() {
        int work = stack.doWork();
        if (peer != null) {
            work += peer.doWork();
        }
        for (UdpEchoService service : udpEcho) {
            work += service.poll();
        }
        for (TcpService service : tcpServices) {
            work += service.poll();
        }
        return work;
    }

    @Override
    public void close() {
        for (UdpEchoService service : udpEcho) {
            service.close();
        }
        for (TcpService service : tcpServices) {
            service.close();
        }
        stack.close();
        if (peer != null) {
            peer.close();
        }
        if (wire != null) {
            wire.close();
        }
        if (pcap != null) {
            pcap.close();
        }
    }
}
