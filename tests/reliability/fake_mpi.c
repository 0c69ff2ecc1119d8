/* A stand-in for another MPI library (Open MPI's libmpi.so.40), for the test
 * that courier run refuses a program linked with one (rel_foreign_mpi): one
 * function, and every process a job of one rank, as a real one would run
 * without its own launcher. */
int MPI_Init(int *argc, char ***argv);
int MPI_Comm_size_world(void);

int MPI_Init(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    return 0;
}

int MPI_Comm_size_world(void)
{
    return 1;
}
