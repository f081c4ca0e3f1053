package dev.tern.cli;

import dev.tern.stack.TcpConnection;
import dev.tern.stack.TernSocketException;
import dev.tern.tcp.TcpTrace;

import java.io.BufferedWriter;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;

/**
 * {@code --tcp-trace FILE}: each traced connection's sender writes records into an off-heap {@link TcpTrace} on the
 * stack thread; a daemon thread here drains them to CSV every 100 ms, and {@link #close} drains the rest. One file
 * ({@code nc}), or one per accepted connection ({@code serve}: {@code FILE} becomes {@code NAME-1.csv},
 * {@code NAME-2.csv}, ... after its extension is taken off). Without a file, nothing is traced.
 */
final class ConnectionTraces implements AutoCloseable {
    /** Records a trace holds before the drainer reads them: at one record per ACK, seconds of a fast transfer. */
    private static final int RECORDS = 1 << 20;

    private record Traced(TcpTrace trace, Path file, BufferedWriter out) {
    }

    private final Path file;
    private final boolean perConnection;
    private final Map<TcpConnection, Traced> open = new IdentityHashMap<>();
    private final List<Path> written = new ArrayList<>();
    private Thread drainer;
    private volatile boolean closing;
    private int count;

    ConnectionTraces(Path file, boolean perConnection) {
        this.file = file;
        this.perConnection = perConnection;
    }

    /** Starts tracing {@code connection}'s sender (nothing without {@code --tcp-trace}). */
    synchronized void attach(TcpConnection connection) throws TernSocketException {
        if (file == null || (!perConnection && count > 0)) {
            return;
        }
        final Path target = perConnection ? numbered(++count) : file;
        if (!perConnection) {
            count++;
        }
        final TcpTrace trace = new TcpTrace(RECORDS);
        try {
            final BufferedWriter out = Files.newBufferedWriter(target);
            out.write(TcpTrace.CSV_HEADER);
            out.write('\n');
            open.put(connection, new Traced(trace, target, out));
        } catch (IOException e) {
            trace.close();
            throw new CommandFailure("cannot write the TCP trace " + target + ": " + Tern.reason(e));
        }
        connection.trace(trace);
        written.add(target);
        if (drainer == null) {
            drainer = Thread.ofPlatform().daemon().name("tern-tcp-trace").start(this::drainLoop);
        }
    }

    private Path numbered(int n) {
        final String name = file.getFileName().toString();
        final int dot = name.lastIndexOf('.');
        final String stem = dot > 0 ? name.substring(0, dot) : name;
        final String extension = dot > 0 ? name.substring(dot) : ".csv";
        return file.resolveSibling(stem + "-" + n + extension);
    }

    /**
     * {@code connection} is about to close (call it before {@code close}, while the handle is valid): its sender stops
     * tracing, what the trace holds goes to its file, and the file is closed.
     */
    synchronized void detach(TcpConnection connection) {
        final Traced traced = open.remove(connection);
        if (traced != null) {
            stopTracing(connection);
            finish(traced);
        }
    }

    private static void stopTracing(TcpConnection connection) {
        try {
            connection.trace(null);
        } catch (TernSocketException | RuntimeException e) {
            // Already released: the layer dropped the trace with the handle.
        }
    }

    private void drainLoop() {
        while (!closing) {
            synchronized (this) {
                for (Traced traced : open.values()) {
                    drain(traced);
                }
            }
            try {
                Thread.sleep(100);
            } catch (InterruptedException e) {
                return;
            }
        }
    }

    private static void drain(Traced traced) {
        try {
            traced.trace.drainCsv(traced.out);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static void finish(Traced traced) {
        try (BufferedWriter out = traced.out) {
            traced.trace.drainCsv(out);
            if (traced.trace.dropped() > 0) {
                System.err.printf("tern: tcp trace %s: %d records dropped (written faster than read)%n", traced.file,
                    traced.trace.dropped());
            }
        } catch (IOException e) {
            System.err.println("tern: tcp trace " + traced.file + ": " + Tern.reason(e));
        } finally {
            traced.trace.close();
        }
    }

    /** The files written so far. */
    synchronized List<Path> files() {
        return List.copyOf(written);
    }

    @Override
    public void close() {
        closing = true;
        if (drainer != null) {
            drainer.interrupt();
            try {
                drainer.join(1000);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
        synchronized (this) {
            open.forEach((connection, traced) -> {
                stopTracing(connection);
                finish(traced);
            });
            open.clear();
        }
    }
}
