package dev.tern.cli;

import dev.tern.ethernet.memory.MemoryWire;
import dev.tern.stack.NetStack;
import dev.tern.stack.TcpConnection;
import dev.tern.tcp.TcpOptions;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.ByteArrayOutputStream;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@code tern serve --http} as HTTP/1.1 clients expect it (RFC 9112 §9.3): persistent connections, pipelined requests
 * answered in order, HTTP/1.0 closing unless asked not to, bounded request heads, bodies skipped. Two stacks on the
 * memory wire, the server polled on the test's thread; the client's bytes are written raw, as a pipelining client
 * sends them.
 */
class HttpFileServiceTest {
    private static final int SERVER = 0xc612_0001;

    @TempDir
    Path files;
    private MemoryWire wire;
    private NetStack server;
    private NetStack client;
    private HttpFileService http;
    private final Arena arena = Arena.ofConfined();
    private final MemorySegment scratch = arena.allocate(64 * 1024);

    @BeforeEach
    void start() throws Exception {
        Files.writeString(files.resolve("a.txt"), "alpha\n");
        Files.writeString(files.resolve("b.html"), "<p>beta</p>\n");
        wire = MemoryWire.builder().build();
        server = NetStack.builder().name("http-server").link(wire.attach("server", 0x0200_0000_0001L))
            .address("198.18.0.1/24").build();
        client = NetStack.builder().name("http-client").link(wire.attach("client", 0x0200_0000_0002L))
            .address("198.18.0.2/24").build();
        http = new HttpFileService(server, 80, files, TcpOptions.DEFAULT, new ConnectionTraces(null, true));
    }

    @AfterEach
    void stop() {
        http.close();
        client.close();
        server.close();
        wire.close();
        arena.close();
    }

    private void turn() {
        client.doWork();
        server.doWork();
        http.poll();
    }

    private TcpConnection connect() throws Exception {
        final TcpConnection connection = client.connect(SERVER, 80);
        for (int i = 0; i < 1000 && !connection.isConnected(); i++) {
            turn();
        }
        assertTrue(connection.isConnected());
        return connection;
    }

    private void send(TcpConnection connection, String text) throws Exception {
        final byte[] bytes = text.getBytes(StandardCharsets.ISO_8859_1);
        MemorySegment.copy(bytes, 0, scratch, ValueLayout.JAVA_BYTE, 0, bytes.length);
        assertEquals(bytes.length, connection.write(scratch, 0, bytes.length));
    }

    /** What the server sent until it closed, or until nothing more came for many turns; "EOF" marks the close. */
    private String receive(TcpConnection connection) throws Exception {
        final ByteArrayOutputStream out = new ByteArrayOutputStream();
        int quiet = 0;
        while (quiet < 200) {
            turn();
            final int n = connection.read(scratch, 0, (int) scratch.byteSize());
            if (n < 0) {
                out.writeBytes("EOF".getBytes(StandardCharsets.ISO_8859_1));
                break;
            }
            if (n == 0) {
                quiet++;
            } else {
                quiet = 0;
                out.writeBytes(scratch.asSlice(0, n).toArray(ValueLayout.JAVA_BYTE));
            }
        }
        return out.toString(StandardCharsets.ISO_8859_1);
    }

    private static int count(String text, String part) {
        int count = 0;
        for (int i = text.indexOf(part); i >= 0; i = text.indexOf(part, i + 1)) {
            count++;
        }
        return count;
    }

    @Test
    void http11KeepsTheConnectionAndAnswersPipelinedRequestsInOrder() throws Exception {
        final TcpConnection connection = connect();
        send(connection, "GET /a.txt HTTP/1.1\r\nHost: x\r\n\r\nHEAD /b.html HTTP/1.1\r\nHost: x\r\n\r\n"
            + "GET /missing HTTP/1.1\r\nHost: x\r\n\r\nGET /b.html HTTP/1.1\r\nHost: x\r\n\r\n");
        final String responses = receive(connection);
        assertEquals(4, count(responses, "HTTP/1.1 "), responses);
        final int a = responses.indexOf("alpha\n");
        final int head = responses.indexOf("Content-Type: text/html", a);
        final int missing = responses.indexOf("HTTP/1.1 404 Not Found", head);
        final int beta = responses.indexOf("<p>beta</p>", missing);
        assertTrue(a > 0 && head > a && missing > head && beta > missing, "in order: " + responses);
        assertEquals(1, count(responses, "<p>beta</p>"), "HEAD has no body");
        assertTrue(!responses.contains("Connection: close") && !responses.endsWith("EOF"), "kept open: " + responses);

        // The same connection serves a later request, and "Connection: close" ends it after the response.
        send(connection, "GET /a.txt HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
        final String last = receive(connection);
        assertTrue(last.startsWith("HTTP/1.1 200 OK\r\n") && last.contains("Connection: close\r\n"), last);
        assertTrue(last.endsWith("alpha\nEOF"), last);
        connection.close();
    }

    @Test
    void http10ClosesUnlessItAsksForKeepAlive() throws Exception {
        final TcpConnection plain = connect();
        send(plain, "GET /a.txt HTTP/1.0\r\n\r\n");
        final String closed = receive(plain);
        assertTrue(closed.contains("Connection: close\r\n") && closed.endsWith("alpha\nEOF"), closed);
        plain.close();

        final TcpConnection kept = connect();
        send(kept, "GET /a.txt HTTP/1.0\r\nConnection: keep-alive\r\n\r\n");
        final String open = receive(kept);
        assertTrue(open.contains("Connection: keep-alive\r\n") && open.endsWith("alpha\n"), open);
        send(kept, "GET /b.html HTTP/1.0\r\nConnection: keep-alive\r\n\r\n");
        assertTrue(receive(kept).endsWith("<p>beta</p>\n"));
        kept.close();
    }

    @Test
    void aRequestBodyIsSkippedAndTheNextRequestStillAnswered() throws Exception {
        final TcpConnection connection = connect();
        send(connection, "GET /a.txt HTTP/1.1\r\nContent-Length: 11\r\n\r\nhello worldGET /b.html HTTP/1.1\r\n\r\n");
        final String responses = receive(connection);
        assertEquals(2, count(responses, "HTTP/1.1 200 OK"), responses);
        assertTrue(responses.endsWith("<p>beta</p>\n"), responses);
        connection.close();
    }

    @Test
    void anOversizedHeadGets431AndTheConnectionCloses() throws Exception {
        final TcpConnection connection = connect();
        send(connection, "GET /a.txt HTTP/1.1\r\nX-Filler: " + "x".repeat(9000) + "\r\n\r\n");
        final String response = receive(connection);
        assertTrue(response.startsWith("HTTP/1.1 431 Request Header Fields Too Large\r\n"), response);
        assertTrue(response.endsWith("EOF"), response);
        connection.close();
    }

    @Test
    void badRequestsAndChunkedBodiesGetAnErrorAndClose() throws Exception {
        for (String request : new String[] {"NONSENSE\r\n\r\n", "POST /a.txt HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n",
            "DELETE /a.txt HTTP/1.1\r\n\r\n", "GET /a.txt HTTP/1.1\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n"}) {
            final TcpConnection connection = connect();
            send(connection, request);
            final String response = receive(connection);
            assertTrue(response.matches("(?s)HTTP/1\\.1 (400|405|501) .*Connection: close\r\n.*EOF"),
                request + " -> " + response);
            connection.close();
        }
    }

    @Test
    void aChangedDeletedOrLargeFileIsServedAsItIsNowNotAsItWasCached() throws Exception {
        final TcpConnection connection = connect();
        final Path file = files.resolve("c.txt");
        Files.writeString(file, "first\n");
        send(connection, "GET /c.txt HTTP/1.1\r\n\r\n");
        assertTrue(receive(connection).endsWith("first\n"));

        // Another size: served anew at once.
        Files.writeString(file, "second, longer\n");
        send(connection, "GET /c.txt HTTP/1.1\r\n\r\n");
        assertTrue(receive(connection).endsWith("second, longer\n"));

        // The same size, another modification time: served anew.
        Files.writeString(file, "third!, longer\n");
        Files.setLastModifiedTime(file, java.nio.file.attribute.FileTime.fromMillis(1_000_000_000L));
        send(connection, "GET /c.txt HTTP/1.1\r\n\r\n");
        assertTrue(receive(connection).endsWith("third!, longer\n"));

        // Replaced by another file (another inode) of the same size and time: served anew.
        final Path other = files.resolve("c.tmp");
        Files.writeString(other, "fourth, longer\n");
        Files.setLastModifiedTime(other, java.nio.file.attribute.FileTime.fromMillis(1_000_000_000L));
        Files.move(other, file, java.nio.file.StandardCopyOption.REPLACE_EXISTING);
        send(connection, "GET /c.txt HTTP/1.1\r\n\r\n");
        assertTrue(receive(connection).endsWith("fourth, longer\n"));

        Files.delete(file);
        send(connection, "GET /c.txt HTTP/1.1\r\n\r\n");
        assertTrue(receive(connection).startsWith("HTTP/1.1 404 Not Found\r\n"));

        // Beyond the cache's file size: streamed from the file, every byte.
        final byte[] large = new byte[200_000];
        new java.util.SplittableRandom(5).nextBytes(large);
        Files.write(files.resolve("large.bin"), large);
        send(connection, "GET /large.bin HTTP/1.1\r\n\r\n");
        final String response = receive(connection);
        assertTrue(response.startsWith("HTTP/1.1 200 OK\r\n") && response.contains("Content-Length: 200000\r\n"));
        final byte[] body = response.substring(response.indexOf("\r\n\r\n") + 4).getBytes(StandardCharsets.ISO_8859_1);
        org.junit.jupiter.api.Assertions.assertArrayEquals(large, body);
        connection.close();
    }
}
