/** IGMPv3 host membership with v2/v1 compatibility, and the multicast filter of the interface. */
package dev.tern.igmp;
