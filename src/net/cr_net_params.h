/* Parameters of the machine models, in one place.
 *
 * Every number is either taken from a seed paper (the comment says which and where) or is an
 * assumption the paper leaves open (marked ASSUMED) or a constant calibrated so that a
 * published end-to-end figure comes out (marked CALIBRATED, with the figure it serves).
 * Times are integer picoseconds (cr_time), rates are bytes per second (1 MB = 10^6 bytes).
 */
#ifndef COURIER_NET_PARAMS_H
#define COURIER_NET_PARAMS_H

/* ---------------- Intel iPSC/2 Direct-Connect hypercube (seed 000) ---------------- */
#define CR_IPSC2_MAX_DIM 7         /* 128 nodes; channel 7 is the external I/O channel */
#define CR_IPSC2_CHANNELS 8        /* per router, full duplex, "channels 0-7" */
#define CR_IPSC2_CHAN_BPS 2800000  /* "2.8 Mbytes/second" per channel direction */
#define CR_IPSC2_NODE_BPS 10700000 /* node DMA interface "burst at 10.7 Mbytes/sec" */
#define CR_IPSC2_PROBE_PS                                                                          \
    2000000                       /* ASSUMED 2 us per router: "a few microseconds per node         \
                                     to build the path" */
#define CR_IPSC2_STATUS_PS 250000 /* ASSUMED 0.25 us per hop for RDY on the status path */
#define CR_IPSC2_PIPE_PS 100000   /* ASSUMED 0.1 us per hop of synchronous data pipeline */
#define CR_IPSC2_FRAME_BYTES 8    /* routing probe word + checksum word on the wire */
#define CR_IPSC2_REARM_PS                                                                          \
    20000000 /* ASSUMED 20 us for the interrupt handler to re-arm the                              \
                receive DMA; until then the FIFO is "not ready" */
/* NX/2 software model (seed 000 section 3). */
#define CR_NX2_SHORT_MAX 100      /* "Messages of 100 bytes or less ... one trip" */
#define CR_NX2_OSEND_PS 170000000 /* CALIBRATED: 0-byte neighbour latency "about 350us" */
#define CR_NX2_ORECV_PS 172000000 /* CALIBRATED: idem (send + recv + wire = 350 us) */
#define CR_NX2_COPY_PS 100000     /* ASSUMED 0.1 us/byte: short messages "slightly longer" */
#define CR_NX2_CTL_PS 80000000    /* ASSUMED 80 us: OS control messages "take less time" */
#define CR_NX2_CTL_BYTES 16       /* ASSUMED size of the proxy and request messages */

/* First-generation iPSC store-and-forward (seed 004: F(N_hops) = N_hops). ASSUMED values,
 * chosen only so the iPSC/2 is "less than one-fifth the latency of its predecessor". */
#define CR_IPSC1_CHAN_BPS 1250000   /* ASSUMED 10 Mbit/s channels */
#define CR_IPSC1_PACKET 1024        /* ASSUMED packet size; every packet is stored per hop */
#define CR_IPSC1_FWD_PS 700000000   /* ASSUMED 0.7 ms node software per forwarded packet */
#define CR_IPSC1_OSEND_PS 900000000 /* ASSUMED endpoint software */
#define CR_IPSC1_ORECV_PS 900000000

/* ---------------- Meiko CS-2 Elan/Elite fat tree (seed 001) ---------------- */
#define CR_CS2_MAX_NODES 4096    /* "machines with up to 4096 processors" */
#define CR_CS2_ARITY 4           /* 8x8 Elite: 4 links down, 4 up */
#define CR_CS2_LINK_BPS 50000000 /* "50 Mbytes/s" each direction */
#define CR_CS2_SWITCH_PS 170000  /* "increases by 170 ns per switch traversed" */
#define CR_CS2_ACK_PS 71429      /* 5 cycles of 70 MHz per switch for returning acks */
#define CR_CS2_ROUTES 4          /* "Each table entry consists of four possible routes" */
#define CR_CS2_NETWORKS 2        /* "two independent switch networks" */
#define CR_CS2_DMA_BPS 44000000  /* Table 1 sustained 44 MB/s: the Elan DMA engine rate */
#define CR_CS2_FRAG 1024         /* ASSUMED DMA fragment carried as one packet */
/* Software models of Table 1 ("between two PEs over a single switch"); each is the pair of
 * endpoint costs CALIBRATED so that the one-way 0-byte latency equals the table entry. */
#define CR_CS2_DMA_OSEND_PS 4000000 /* Direct DMA: 9 us */
#define CR_CS2_DMA_ORECV_PS 4830000
#define CR_CS2_CHAN_OSEND_PS 11500000 /* Channel comms: 24 us */
#define CR_CS2_CHAN_ORECV_PS 12330000
#define CR_CS2_LIB_OSEND_PS 38500000 /* NX/2, PVM, PARMACS: 78 us */
#define CR_CS2_LIB_ORECV_PS 39330000

/* ---------------- iWarp torus (seed 002) ---------------- */
#define CR_IWARP_MAX_SIDE 32
#define CR_IWARP_WORD_PS 100000       /* 32-bit word in "four phases of 25 ns": 40 MB/s/bus */
#define CR_IWARP_QUEUE_WORDS 8        /* "queue size of eight 32-bit words" */
#define CR_IWARP_LC_PER_CELL 20       /* "up to twenty logical input and ... output channels" */
#define CR_IWARP_OPEN_PER_DIR 3       /* ASSUMED static allocation: 3 open + 2 reserved per */
#define CR_IWARP_RES_PER_DIR 2        /*   output direction = 20 logical output channels */
#define CR_IWARP_DEQ_PS 200000        /* ASSUMED dequeue-signal feedback delay (< 8 words) */
#define CR_IWARP_CHREQ_PS 150000      /* section 8: channel request 150 ns */
#define CR_IWARP_BEGIN_PS 100000      /* section 8: pathway begin marker 100 ns */
#define CR_IWARP_CORNER_ADDR_PS 50000 /* section 8: 50 ns per corner address */
#define CR_IWARP_FWD_PS 200000        /* section 8: forwarding 200 ns per cell */
#define CR_IWARP_TURN_PS 250000       /* section 8: corner turn 250 ns */
#define CR_IWARP_END_PS 100000        /* section 8: end marker 100 ns */
#define CR_IWARP_JOIN_PS 100000       /* section 8: join 100 ns */
#define CR_IWARP_MSG_BEGIN_PS 100000  /* section 8: message begin marker 100 ns */

/* ---------------- IBM SP2 High-Performance Switch (seed 003) ---------------- */
#define CR_SP2_MAX_NODES 512
#define CR_SP2_ARITY 4           /* 8-port chips, bidirectional: 4 down, 4 up */
#define CR_SP2_LINK_BPS 40000000 /* "peak bandwidth of 40 MB/s in each direction" */
#define CR_SP2_SWITCH_PS 125000  /* ASSUMED per chip; "switch latency is less than 1 us" */
#define CR_SP2_PACKET 255        /* ASSUMED wire packet size */
#define CR_SP2_PKT_HDR 28        /* CALIBRATED route+header+pipe header bytes: 35.5 MB/s */
#define CR_SP2_ADAPTER_BPS                                                                         \
    48200000                          /* CALIBRATED adapter/Micro Channel DMA, both directions     \
                                         shared: fat-node exchange 48.2 MB/s */
#define CR_SP2_THIN_COPY_PS 27027     /* "1.8 cycles per byte" at 66.7 MHz: 37.0 MB/s exchange */
#define CR_SP2_FAT_COPY_PS 19500      /* "less than 1.4 cycles per byte" (1.3 ASSUMED) */
#define CR_SP2_THIN_OSEND_PS 19460000 /* CALIBRATED: thin latency 40.0 us */
#define CR_SP2_THIN_ORECV_PS 19460000
#define CR_SP2_FAT_OSEND_PS 18970000 /* CALIBRATED: fat latency 39.0 us */
#define CR_SP2_FAT_ORECV_PS 18970000
/* The SP1 (Table 1's first row): a 370 (POWER1) node and the TB0 adapter, which "has no
 * ability to move data on its own": the pipe layer moves every byte to and from the adapter's
 * FIFOs by programmed I/O over the Micro Channel ("the difference between PIO and DMA
 * bandwidth"). */
#define CR_SP1_PIO_PS 113636 /* CALIBRATED: exchange 8.8 MB/s, one processor's PIO both ways */
#define CR_SP1_TB0_OSEND_PS 18387000 /* CALIBRATED: latency 37.6 us */
#define CR_SP1_TB0_ORECV_PS 18387000
#define CR_SP2_TOKENS 16            /* ASSUMED pipe window in packets (tokens) per pair */
#define CR_SP2_RXQ 8                /* ASSUMED adapter receive queue (packets) */
#define CR_SP2_TOKEN_RET_PS 2000000 /* ASSUMED token return (piggybacked ack) delay */

/* ---- A modern cluster (courier run --sim cluster): a fat tree of 8-port switches like the
 * CS-2's, its link bandwidth and per-switch latency given by the user (defaults 100 Gb/s and
 * 1 us). Nothing here is from a seed paper: the defaults are ASSUMED round figures. */
#define CR_CLUSTER_MAX_NODES 16384
#define CR_CLUSTER_LINK_BPS 12500000000ULL /* 100 Gb/s */
#define CR_CLUSTER_HOP_PS 1000000          /* 1 us per switch traversed */
#define CR_CLUSTER_MTU 4096                /* packets the NIC sends back to back */
#define CR_CLUSTER_OSEND_PS 500000         /* ASSUMED MPI send overhead, 0.5 us */
#define CR_CLUSTER_ORECV_PS 500000         /* ASSUMED MPI receive overhead, 0.5 us */

/* ---- GMD (seed 004, Giloi and Schroeder-Preikschat): TICNET and PEACE with the communication
 * processor (courier run --sim gmd). */
#define CR_GMD_MAX_NODES 4096     /* "hundreds or thousands of PNs" */
#define CR_GMD_CLUSTER 8          /* ASSUMED PNs per cluster bus (the paper does not say) */
#define CR_GMD_BUS_BPS 640000000  /* "up to 640 MBytes per second for the parallel bus system" */
#define CR_GMD_LINK_BPS 100000000 /* "up to 100 Mbytes per second for the ... crossbar links" */
#define CR_GMD_BUS_ARB_PS 100000  /* ASSUMED 0.1 us to win a cluster bus */
#define CR_GMD_XBAR_PS 200000     /* ASSUMED 0.2 us to switch a crossbar link at a cluster bus */
/* "reduces the communication startup time to approximately 20 microseconds" (abstract): the
 * synchronous protocol's: its request, peer_movefrom and data transfer (gmd.c) */
#define CR_GMD_STARTUP_PS 20000000
/* PEACE's startup, per mille of it ([8] in seed 004, section 4) */
#define CR_GMD_PART_SUPERVISOR 75 /* "7.5 % by supervisor space switches" */
#define CR_GMD_PART_DISPATCH 150  /* "15.0 % by process dispatching" */
#define CR_GMD_PART_ISOLATION 175 /* "17.5 % by team isolation" */
#define CR_GMD_PART_INTERRUPT 200 /* "20.0 % by interrupt handling" */
#define CR_GMD_PART_ROUTINES 400  /* "40.0 % by the communication routines proper" */
#define CR_GMD_TYPICAL_PS                                                                          \
    1000000000 /* ASSUMED 1 ms: "in most existing message-based systems                            \
                  the typical startup time is in the order of magnitude                            \
                  of a millisecond" */

#endif
