package dev.tern.tcp.testing;

import dev.tern.core.io.ByteRing;
import dev.tern.tcp.TcpEvents;
import dev.tern.tcp.TcpLayer;

import java.io.ByteArrayOutputStream;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.ArrayList;
import java.util.List;

/**
 * A test application on one stack: records events, writes a byte array through a connection's send ring as room
 * frees, and collects what it reads. Not for the allocation tests (it allocates freely).
 */
public final class App implements TcpEvents {
    private final TcpLayer tcp;
    private final TestStack stack;
    private final MemorySegment scratch = Arena.ofAuto().allocate(1 << 16);
    public final List<String> events = new ArrayList<>();
    public final List<Integer> acceptedConnections = new ArrayList<>();
    public final ByteArrayOutputStream received = new ByteArrayOutputStream();
    public int connection = -1;
    public int closedError = -1;
    public boolean autoAccept = true;
    public boolean autoRead = true;
    public boolean closeWhenSent;
    public boolean closeOnEof;
    private boolean eofSeen;
    private byte[] toSend = new byte[0];
    private int sent;
    private final TcpNetworkClock clock;

    /** The time source the app uses for API calls (the network's virtual clock). */
    public interface TcpNetworkClock {
        long now();
    }

    public App(TestStack stack, TcpNetworkClock clock) {
        this.stack = stack;
        this.tcp = stack.tcp;
        this.clock = clock;
    }

    public void send(byte[] data) {
        final byte[] joined = new byte[toSend.length - sent + data.length];
        System.arraycopy(toSend, sent, joined, 0, toSend.length - sent);
        System.arraycopy(data, 0, joined, toSend.length - sent, data.length);
        toSend = joined;
        sent = 0;
        pump();
    }

    /** Writes as much as fits; closes when everything is written and {@link #closeWhenSent}. */
    public void pump() {
        if (connection < 0) {
            return;
        }
        final ByteRing ring = tcp.sendBuffer(connection);
        if (ring == null) {
            return;
        }
        boolean wrote = false;
        while (sent < toSend.length) {
            final int chunk = Math.min(Math.min(ring.freeSpace(), toSend.length - sent), (int) scratch.byteSize());
            if (chunk <= 0) {
                break;
            }
            MemorySegment.copy(toSend, sent, scratch, ValueLayout.JAVA_BYTE, 0, chunk);
            ring.write(scratch, 0, chunk);
            sent += chunk;
            wrote = true;
        }
        if (wrote) {
            tcp.sendable(connection, clock.now());
        }
        if (closeWhenSent && sent == toSend.length) {
            closeWhenSent = false;
            tcp.shutdownOutput(connection, clock.now());
        }
        maybeClose();
    }

    /** Closes once the peer's end of stream was read and everything was written. */
    private void maybeClose() {
        if (closeOnEof && eofSeen && allSent() && connection >= 0) {
            closeOnEof = false;
            tcp.close(connection, clock.now());
        }
    }

    public boolean allSent() {
        return sent == toSend.length;
    }

    public void read() {
        if (connection < 0) {
            return;
        }
        final ByteRing ring = tcp.receiveBuffer(connection);
        if (ring == null) {
            return;
        }
        boolean read = false;
        int available;
        while ((available = ring.available()) > 0) {
            final int chunk = Math.min(available, (int) scratch.byteSize());
            ring.read(scratch, 0, chunk);
            final byte[] bytes = new byte[chunk];
            MemorySegment.copy(scratch, ValueLayout.JAVA_BYTE, 0, bytes, 0, chunk);
            received.writeBytes(bytes);
            read = true;
        }
        if (read) {
            tcp.consumed(connection, clock.now());
        }
        if (tcp.receiveShutdown(connection) && ring.available() == 0) {
            eofSeen = true;
        }
        maybeClose();
    }

    @Override
    public void acceptable(int listener) {
        events.add("acceptable");
        if (autoAccept) {
            int c;
            while ((c = tcp.accept(listener)) >= 0) {
                acceptedConnections.add(c);
                if (connection < 0) {
                    connection = c;
                    pump();
                }
                if (autoRead) {
                    final int saved = connection;
                    connection = c;
                    read();
                    connection = saved;
                }
            }
        }
    }

    @Override
    public void established(int c) {
        events.add("established");
        pump();
    }

    @Override
    public void readable(int c) {
        events.add("readable");
        if (autoRead && c == connection) {
            read();
        }
    }

    @Override
    public void writable(int c) {
        if (c == connection) {
            pump();
        }
    }

    @Override
    public void closed(int c, int error) {
        events.add("closed " + error);
        if (c == connection) {
            closedError = error;
            if (autoRead) {
                read();
            }
        }
    }

    public TestStack stack() {
        return stack;
    }
}
