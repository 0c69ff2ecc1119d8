// Point-to-point through the C++ binding: Send/Recv, Isend/Irecv with
// Waitall, Sendrecv, Sendrecv_replace, Status (source, tag, count), Probe and
// Iprobe, persistent requests, Ssend, Testany/Waitany, PROC_NULL.
#include "mpicxx_check.h"

int main(int argc, char **argv)
{
    MPI::Init(argc, argv);
    const int rank = MPI::COMM_WORLD.Get_rank();
    const int size = MPI::COMM_WORLD.Get_size();
    CHECK(size >= 2);
    const int right = (rank + 1) % size, left = (rank + size - 1) % size;

    // Send/Recv with a status
    if (rank == 0) {
        int v[3] = {7, 8, 9};
        MPI::COMM_WORLD.Send(v, 3, MPI::INT, 1, 42);
    } else if (rank == 1) {
        int v[5] = {0, 0, 0, 0, 0};
        MPI::Status st;
        MPI::COMM_WORLD.Recv(v, 5, MPI::INT, MPI::ANY_SOURCE, MPI::ANY_TAG, st);
        CHECK(st.Get_source() == 0 && st.Get_tag() == 42 && st.Get_count(MPI::INT) == 3);
        CHECK(v[0] == 7 && v[2] == 9 && v[3] == 0);
    }

    // Probe, then receive what was probed
    if (rank == 0) {
        double d[4] = {1.5, 2.5, 3.5, 4.5};
        MPI::COMM_WORLD.Ssend(d, 4, MPI::DOUBLE, 1, 5);
    } else if (rank == 1) {
        MPI::Status st;
        MPI::COMM_WORLD.Probe(0, 5, st);
        const int n = st.Get_count(MPI::DOUBLE);
        CHECK(n == 4);
        double d[4];
        MPI::COMM_WORLD.Recv(d, n, MPI::DOUBLE, st.Get_source(), st.Get_tag());
        CHECK(d[3] == 4.5);
    }

    // Iprobe until the message is there
    if (rank == 1) {
        char c = 'x';
        MPI::COMM_WORLD.Send(&c, 1, MPI::CHAR, 0, 6);
    } else if (rank == 0) {
        MPI::Status st;
        while (!MPI::COMM_WORLD.Iprobe(1, 6, st)) {
        }
        CHECK(st.Get_count(MPI::CHAR) == 1 && st.Get_source() == 1);
        char c = 0;
        MPI::COMM_WORLD.Recv(&c, 1, MPI::CHAR, 1, 6);
        CHECK(c == 'x');
    }

    // A ring with Isend/Irecv and Request::Waitall with statuses
    {
        long out = 100 + rank, in = -1;
        MPI::Request r[2];
        r[0] = MPI::COMM_WORLD.Irecv(&in, 1, MPI::LONG, left, 7);
        r[1] = MPI::COMM_WORLD.Isend(&out, 1, MPI::LONG, right, 7);
        MPI::Status st[2];
        MPI::Request::Waitall(2, r, st);
        CHECK(in == 100 + left && st[0].Get_source() == left && st[0].Get_tag() == 7);
        CHECK(r[0] == MPI::REQUEST_NULL && r[1] == MPI::REQUEST_NULL);
    }

    // Waitany / Testall
    {
        int out = rank, in = -1;
        MPI::Request r[2];
        r[0] = MPI::COMM_WORLD.Isend(&out, 1, MPI::INT, right, 8);
        r[1] = MPI::COMM_WORLD.Irecv(&in, 1, MPI::INT, left, 8);
        int done = 0;
        while (done < 2) {
            MPI::Status st;
            int i = MPI::Request::Waitany(2, r, st);
            CHECK(i == 0 || i == 1);
            done++;
        }
        CHECK(in == left);
        CHECK(MPI::Request::Testall(2, r));
    }

    // Sendrecv and Sendrecv_replace
    {
        int out = rank * 10, in = -1;
        MPI::Status st;
        MPI::COMM_WORLD.Sendrecv(&out, 1, MPI::INT, right, 9, &in, 1, MPI::INT, left, 9, st);
        CHECK(in == left * 10 && st.Get_source() == left);
        int v = rank;
        MPI::COMM_WORLD.Sendrecv_replace(&v, 1, MPI::INT, right, 10, left, 10);
        CHECK(v == left);
    }

    // Persistent requests, started three times
    {
        int out = 0, in = -1;
        MPI::Prequest p[2];
        p[0] = MPI::COMM_WORLD.Recv_init(&in, 1, MPI::INT, left, 11);
        p[1] = MPI::COMM_WORLD.Send_init(&out, 1, MPI::INT, right, 11);
        for (int k = 0; k < 3; k++) {
            out = rank + k;
            MPI::Prequest::Startall(2, p);
            MPI::Request::Waitall(2, p);
            CHECK(in == left + k);
        }
        p[0].Free();
        p[1].Free();
    }

    // PROC_NULL: completes at once, source PROC_NULL, count 0
    {
        int x = 5;
        MPI::Status st;
        MPI::COMM_WORLD.Recv(&x, 1, MPI::INT, MPI::PROC_NULL, 0, st);
        CHECK(st.Get_source() == MPI::PROC_NULL && st.Get_count(MPI::INT) == 0 && x == 5);
    }

    // Test on a request that completes
    {
        int out = rank, in = -1;
        MPI::Request rr = MPI::COMM_WORLD.Irecv(&in, 1, MPI::INT, left, 12);
        MPI::COMM_WORLD.Send(&out, 1, MPI::INT, right, 12);
        MPI::Status st;
        while (!rr.Test(st)) {
        }
        CHECK(in == left && st.Get_tag() == 12);
    }

    MPI::COMM_WORLD.Barrier();
    if (rank == 0) std::printf("mpicxx p2p: all checks passed on %d ranks\n", size);
    MPI::Finalize();
    return 0;
}
