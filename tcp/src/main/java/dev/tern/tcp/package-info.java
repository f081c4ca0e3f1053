/**
 * TCP (RFC 9293): the state machine, options (RFC 7323, RFC 2018, RFC 2883), timers (RFC 6298), congestion control
 * (RFC 5681, RFC 6582) behind {@link dev.tern.tcp.CongestionControl}, and the handle-based core API used on the stack
 * thread ({@link dev.tern.tcp.TcpLayer}).
 */
package dev.tern.tcp;
