/** TCP wire format (RFC 9293 §3.1): the header flyweight, flag and option constants, and the value form. No state, no time. */
package dev.tern.tcp.wire;
