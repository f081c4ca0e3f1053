package dev.tern.udp;

/** What the UDP layer tells the socket API about a socket, on the stack thread; must not allocate. */
public interface UdpEvents {
    /** Datagrams (or an error) are waiting in the socket's receive ring. */
    void readable(int socket);

    /** Room appeared in the socket's send ring. */
    void writable(int socket);
}
