/* courier — the MPI-2.2 C++ binding (namespace MPI), header-only, over the
 * C binding of mpi.h.
 *
 * mpi.h includes this file at its end when compiled as C++, unless the program
 * defines MPI_NO_CPPBIND, OMPI_SKIP_MPICXX or MPICH_SKIP_MPICXX (the macros
 * Open MPI's and MPICH's headers know) before including it; a program that
 * uses only the C functions is unaffected either way.
 *
 * What is here: the classes of MPI-2.2 chapter 16 — Comm (abstract: Clone is
 * pure virtual), Nullcomm (the type of COMM_NULL), Intracomm, Intercomm,
 * Cartcomm, Graphcomm, Distgraphcomm, Datatype, Status, Request, Prequest,
 * Grequest, Group, Op, Errhandler, Info, Win, File and Exception — with the
 * calls of each, the free functions (Init, Init_thread, Finalize,
 * Is_initialized, Is_finalized, Query_thread, Is_thread_main, Wtime, Wtick,
 * Get_processor_name, Get_version, Compute_dims, Attach_buffer,
 * Detach_buffer, Get_error_class, Get_error_string, Add_error_*, Pcontrol,
 * Get_address, Alloc_mem, Free_mem, the port and name calls,
 * Register_datarep) and the constants (datatypes, operations, predefined
 * handles, error classes, thread levels, comparison results, topology types,
 * file modes, ...). Objects are handles: copying one copies the handle, and
 * destroying one frees nothing (Free does). Member functions are not
 * virtual, except Clone (pure in Comm) and the communicators' destructors:
 * with the standard's virtual members every class's whole vtable, so every
 * wrapper, would be compiled into each file that includes mpi.h (seconds per
 * file, also for programs of the C calls); as it is, a file pays for what it
 * calls, and the predefined handles are constants. User functions have their C++
 * signatures (Op::Init's User_function, the errhandler, attribute copy and
 * delete, generalized request and data representation functions); courier
 * calls them through C trampolines.
 *
 * Errors. The C library is built without C++ exceptions, so nothing may be
 * thrown through its frames. ERRORS_THROW_EXCEPTIONS is therefore, inside
 * courier, a C error handler of this header's that records the error code in
 * a per-thread slot and returns (the C call then returns the code, as under
 * MPI_ERRORS_RETURN); every wrapper here checks the code the C call returns
 * and, when that slot holds it, throws MPI::Exception(code). The handler is
 * courier's own error handler, so it is inherited by Dup, Split, ... and it
 * covers every error courier raises on the object: those of requests (on
 * their communicator, window or file), those of calls on no object (on
 * COMM_WORLD). A C call made directly on an object whose handler is
 * ERRORS_THROW_EXCEPTIONS gets the code returned, as with ERRORS_RETURN. An
 * exception thrown by a user function (an Op, an error handler, a copy or
 * delete function, ...) is caught in its trampoline and rethrown by the
 * wrapper once the C call has returned. Under ERRORS_RETURN the C++ calls,
 * which return no code, just return (as the standard says).
 *
 * Tables. User operations and error handlers each take one of a fixed set of
 * C trampolines (OPS_MAX user Ops live at once, ERRH_MAX error handlers per
 * kind over the run); the tables are function-local statics of inline
 * functions, so every translation unit shares them, and they are guarded by
 * a spin lock (MPI_THREAD_MULTIPLE). Keyval and data representation records
 * are kept for the run (a keyval's functions may be called after
 * Free_keyval).
 *
 * Not here: the MPI-3 and later calls (matched probes, nonblocking and
 * neighbourhood collectives, RMA beyond MPI-2.2's Put/Get/Accumulate with
 * fence, PSCW and lock epochs), which have no C++ binding in any standard;
 * the MPI-1 names MPI-2.2's binding had already dropped (MPI::LB and
 * MPI::UB are there: courier's MPI-1 markers, which only MPI_Type_struct
 * takes, so Datatype::Create_struct refuses them). MPI::SEEK_SET,
 * SEEK_CUR and SEEK_END: when <stdio.h> was included before this header its
 * SEEK_* macros are replaced by constants of the same values; a <stdio.h>
 * included after it defines them again and hides MPI::SEEK_* (use
 * MPI_SEEK_SET, ... there); MPICH_IGNORE_CXX_SEEK, defined before mpi.h,
 * leaves stdio's macros alone and MPI::SEEK_* out, as with MPICH. */
#ifndef COURIER_MPICXX_H
#define COURIER_MPICXX_H
/* The binding needs C++11: an older dialect gets only the C functions. */
#if __cplusplus >= 201103L

#include <exception>

#include "mpi.h"

#if (defined(SEEK_SET) || defined(SEEK_CUR) || defined(SEEK_END)) && !defined(MPICH_IGNORE_CXX_SEEK)
/* stdio.h's SEEK_* macros would turn MPI::SEEK_SET into MPI::0: keep their
 * values as constants in the global namespace and drop the macros. Only the
 * SEEK_* names: no other name of the program's (std::set, std::end under
 * using namespace std) may meet one of ours. */
#ifdef SEEK_SET
enum { courier_stdio_seek_set = SEEK_SET };
#undef SEEK_SET
const int SEEK_SET = courier_stdio_seek_set;
#endif
#ifdef SEEK_CUR
enum { courier_stdio_seek_cur = SEEK_CUR };
#undef SEEK_CUR
const int SEEK_CUR = courier_stdio_seek_cur;
#endif
#ifdef SEEK_END
enum { courier_stdio_seek_end = SEEK_END };
#undef SEEK_END
const int SEEK_END = courier_stdio_seek_end;
#endif
#endif

/* Programs built with -fno-exceptions get the binding too: there an error
 * under ERRORS_THROW_EXCEPTIONS ends the job (MPI_Abort with its code). */
#if defined(__cpp_exceptions) || defined(__EXCEPTIONS)
#define COURIER_CXX_TRY try
#define COURIER_CXX_CATCH catch (...)
#else
#define COURIER_CXX_TRY if (true)
#define COURIER_CXX_CATCH else
#endif

#if __cplusplus >= 201703L
#define COURIER_CXX_OBJ inline /* one object for the whole program */
#else
/* one per translation unit (a handle, no identity); unused ones cost nothing */
#define COURIER_CXX_OBJ static __attribute__((__unused__))
#endif

namespace MPI
{

typedef MPI_Aint Aint;
typedef MPI_Offset Offset;
typedef MPI_Fint Fint;

class Comm;
class Nullcomm;
class Intracomm;
class Intercomm;
class Cartcomm;
class Graphcomm;
class Distgraphcomm;
class Datatype;
class Status;
class Request;
class Prequest;
class Grequest;
class Group;
class Op;
class Errhandler;
class Info;
class Win;
class File;

/* ---- Exception --------------------------------------------------------------- */
class Exception
{
  public:
    Exception() : error_code(MPI_SUCCESS), error_class(MPI_SUCCESS)
    {
        error_string[0] = '\0';
    }
    explicit Exception(int code) : error_code(code), error_class(code)
    {
        int len = 0;
        error_string[0] = '\0';
        if (MPI_Error_class(code, &error_class) != MPI_SUCCESS) error_class = MPI_ERR_UNKNOWN;
        if (MPI_Error_string(code, error_string, &len) != MPI_SUCCESS) error_string[0] = '\0';
    }
    virtual ~Exception() {}
    virtual int Get_error_code() const
    {
        return error_code;
    }
    virtual int Get_error_class() const
    {
        return error_class;
    }
    virtual const char *Get_error_string() const
    {
        return error_string;
    }

  protected:
    int error_code;
    int error_class;
    char error_string[MPI_MAX_ERROR_STRING];
};

/* ---- the error machinery (not part of the API) ----------------------------- */
namespace detail
{

/* ERRORS_THROW_EXCEPTIONS as C++ programs see it: a value no courier handle
 * has, replaced by the C handler below when it is set on an object. */
const MPI_Errhandler throw_sentinel = (MPI_Errhandler)0x57fffffe;

struct thread_state {
    int raised;   /* the code the throwing handler saw, 0 if none */
    int deferred; /* a user function threw: deferred_exception() holds it */
};
inline thread_state &tls()
{
    static thread_local thread_state s; /* zero-initialized: no TLS wrapper */
    return s;
}
inline std::exception_ptr &deferred_exception()
{
    static thread_local std::exception_ptr p;
    return p;
}

/* Called by a trampoline (in courier's C frames) when a user function threw. */
inline void defer_current_exception()
{
    deferred_exception() = std::current_exception();
    tls().deferred = 1;
}

/* The C error handler behind ERRORS_THROW_EXCEPTIONS: never throws. */
inline void throwing_handler(int *, int *code, ...)
{
    tls().raised = (code && *code != MPI_SUCCESS) ? *code : MPI_ERR_UNKNOWN;
}

struct spin_lock {
    static bool &flag()
    {
        static bool f;
        return f;
    }
    spin_lock()
    {
        while (__atomic_test_and_set(&flag(), __ATOMIC_ACQUIRE)) {
        }
    }
    ~spin_lock()
    {
        __atomic_clear(&flag(), __ATOMIC_RELEASE);
    }

  private:
    spin_lock(const spin_lock &);
    spin_lock &operator=(const spin_lock &);
};

inline MPI_Errhandler &throw_handle_slot()
{
    static MPI_Errhandler h = MPI_ERRHANDLER_NULL;
    return h;
}
/* The C handle of the throwing handler, created on first use (after Init). */
inline MPI_Errhandler throw_handle()
{
    MPI_Errhandler h = __atomic_load_n(&throw_handle_slot(), __ATOMIC_ACQUIRE);
    if (h != MPI_ERRHANDLER_NULL) return h;
    spin_lock lock;
    h = throw_handle_slot();
    if (h == MPI_ERRHANDLER_NULL) {
        if (MPI_Comm_create_errhandler((MPI_Comm_errhandler_function *)throwing_handler, &h) !=
            MPI_SUCCESS)
            return MPI_ERRORS_RETURN;
        __atomic_store_n(&throw_handle_slot(), h, __ATOMIC_RELEASE);
    }
    return h;
}
inline MPI_Errhandler errh_to_c(MPI_Errhandler h)
{
    return h == throw_sentinel ? throw_handle() : h;
}
inline MPI_Errhandler errh_from_c(MPI_Errhandler h)
{
    MPI_Errhandler t = __atomic_load_n(&throw_handle_slot(), __ATOMIC_ACQUIRE);
    return (t != MPI_ERRHANDLER_NULL && h == t) ? throw_sentinel : h;
}

/* Throws MPI::Exception(code) (without exceptions: ends the job). */
inline void raise(int code)
{
#if defined(__cpp_exceptions) || defined(__EXCEPTIONS)
    throw Exception(code);
#else
    MPI_Abort(MPI_COMM_WORLD, code);
#endif
}

inline void settle(int rc)
{
    thread_state &s = tls();
    if (s.deferred) {
        s.deferred = 0;
        s.raised = 0;
        std::exception_ptr p = deferred_exception();
        deferred_exception() = std::exception_ptr();
#if defined(__cpp_exceptions) || defined(__EXCEPTIONS)
        std::rethrow_exception(p);
#endif
    }
    int raised = s.raised;
    s.raised = 0;
    if (rc != MPI_SUCCESS && raised == rc) raise(rc);
    /* Otherwise the object's handler returned (ERRORS_RETURN, a user handler):
     * so does the C++ call. */
}
/* After every C call. */
inline void check(int rc)
{
    if (rc != MPI_SUCCESS || tls().deferred) settle(rc);
}
/* After MPI_*_call_errhandler, which returns MPI_SUCCESS whatever the handler. */
inline void check_called(int rc, int code)
{
    thread_state &s = tls();
    if (s.deferred) settle(rc);
    if (code != MPI_SUCCESS && s.raised == code) {
        s.raised = 0;
        raise(code);
    }
    check(rc);
}
/* An error found by the binding itself (a table full): raised on COMM_WORLD. */
inline void fail(int code)
{
    check_called(MPI_Comm_call_errhandler(MPI_COMM_WORLD, code), code);
}

/* A scratch array: on the stack when small. */
template <typename T, int N = 16> class scratch
{
  public:
    explicit scratch(int n) : p(n > N ? new T[n] : small) {}
    ~scratch()
    {
        if (p != small) delete[] p;
    }
    T *get()
    {
        return p;
    }
    T &operator[](int i)
    {
        return p[i];
    }

  private:
    scratch(const scratch &);
    scratch &operator=(const scratch &);
    T small[N];
    T *p;
};

/* The C handle behind a handle class T (Datatype, Comm, ...), of C type C and
 * null value Null, for T to derive from: T converts to the C handle, and to a
 * pointer to it for C calls that set it; two objects of T (or of classes
 * derived from it) compare by it. The constructors are constexpr, so that the
 * predefined objects are constants. The one from the C handle is explicit:
 * Comm inherits it, the others deriving from handle declare an implicit one.
 * Where T says `using handle::operator=', it takes the C handle by
 * assignment. Copies copy the handle. */
template <class T, class C, C Null> class handle
{
  public:
    constexpr handle() : mpi_handle(Null) {}
    explicit constexpr handle(C c) : mpi_handle(c) {}
    T &operator=(const C &c)
    {
        mpi_handle = c;
        return static_cast<T &>(*this);
    }
    operator C() const
    {
        return mpi_handle;
    }
    operator C *()
    {
        return &mpi_handle;
    }
    bool operator==(const handle &h) const
    {
        return mpi_handle == h.mpi_handle;
    }
    bool operator!=(const handle &h) const
    {
        return mpi_handle != h.mpi_handle;
    }

  protected:
    C mpi_handle;
};

} // namespace detail

/* ---- Datatype ---------------------------------------------------------------- */
class Datatype : public detail::handle<Datatype, MPI_Datatype, MPI_DATATYPE_NULL>
{
  public:
    typedef int Copy_attr_function(const Datatype &oldtype, int type_keyval, void *extra_state,
                                   void *attribute_val_in, void *attribute_val_out, bool &flag);
    typedef int Delete_attr_function(Datatype &type, int type_keyval, void *attribute_val,
                                     void *extra_state);

    constexpr Datatype() {}
    constexpr Datatype(MPI_Datatype h) : handle(h) {}
    using handle::operator=;

    Datatype Create_contiguous(int count) const
    {
        Datatype t;
        detail::check(MPI_Type_contiguous(count, mpi_handle, &t.mpi_handle));
        return t;
    }
    Datatype Create_vector(int count, int blocklength, int stride) const
    {
        Datatype t;
        detail::check(MPI_Type_vector(count, blocklength, stride, mpi_handle, &t.mpi_handle));
        return t;
    }
    Datatype Create_hvector(int count, int blocklength, Aint stride) const
    {
        Datatype t;
        detail::check(
            MPI_Type_create_hvector(count, blocklength, stride, mpi_handle, &t.mpi_handle));
        return t;
    }
    Datatype Create_indexed(int count, const int blocklengths[], const int displacements[]) const
    {
        Datatype t;
        detail::check(
            MPI_Type_indexed(count, blocklengths, displacements, mpi_handle, &t.mpi_handle));
        return t;
    }
    Datatype Create_hindexed(int count, const int blocklengths[], const Aint displacements[]) const
    {
        Datatype t;
        detail::check(MPI_Type_create_hindexed(count, blocklengths, displacements, mpi_handle,
                                               &t.mpi_handle));
        return t;
    }
    Datatype Create_indexed_block(int count, int blocklength, const int displacements[]) const
    {
        Datatype t;
        detail::check(MPI_Type_create_indexed_block(count, blocklength, displacements, mpi_handle,
                                                    &t.mpi_handle));
        return t;
    }
    Datatype Create_hindexed_block(int count, int blocklength, const Aint displacements[]) const
    {
        Datatype t;
        detail::check(MPI_Type_create_hindexed_block(count, blocklength, displacements, mpi_handle,
                                                     &t.mpi_handle));
        return t;
    }
    static Datatype Create_struct(int count, const int blocklengths[], const Aint displacements[],
                                  const Datatype types[])
    {
        detail::scratch<MPI_Datatype> c(count);
        for (int i = 0; i < count; i++) c[i] = types[i].mpi_handle;
        Datatype t;
        detail::check(
            MPI_Type_create_struct(count, blocklengths, displacements, c.get(), &t.mpi_handle));
        return t;
    }
    Datatype Create_resized(const Aint lb, const Aint extent) const
    {
        Datatype t;
        detail::check(MPI_Type_create_resized(mpi_handle, lb, extent, &t.mpi_handle));
        return t;
    }
    Datatype Create_subarray(int ndims, const int sizes[], const int subsizes[], const int starts[],
                             const int order) const
    {
        Datatype t;
        detail::check(MPI_Type_create_subarray(ndims, sizes, subsizes, starts, order, mpi_handle,
                                               &t.mpi_handle));
        return t;
    }
    Datatype Create_darray(int size, int rank, int ndims, const int gsizes[], const int distribs[],
                           const int dargs[], const int psizes[], int order) const
    {
        Datatype t;
        detail::check(MPI_Type_create_darray(size, rank, ndims, gsizes, distribs, dargs, psizes,
                                             order, mpi_handle, &t.mpi_handle));
        return t;
    }
    static Datatype Create_f90_integer(int r)
    {
        Datatype t;
        detail::check(MPI_Type_create_f90_integer(r, &t.mpi_handle));
        return t;
    }
    static Datatype Create_f90_real(int p, int r)
    {
        Datatype t;
        detail::check(MPI_Type_create_f90_real(p, r, &t.mpi_handle));
        return t;
    }
    static Datatype Create_f90_complex(int p, int r)
    {
        Datatype t;
        detail::check(MPI_Type_create_f90_complex(p, r, &t.mpi_handle));
        return t;
    }
    static Datatype Match_size(int typeclass, int size)
    {
        Datatype t;
        detail::check(MPI_Type_match_size(typeclass, size, &t.mpi_handle));
        return t;
    }
    Datatype Dup() const
    {
        Datatype t;
        detail::check(MPI_Type_dup(mpi_handle, &t.mpi_handle));
        return t;
    }
    void Commit()
    {
        detail::check(MPI_Type_commit(&mpi_handle));
    }
    void Free()
    {
        detail::check(MPI_Type_free(&mpi_handle));
    }
    int Get_size() const
    {
        int n = 0;
        detail::check(MPI_Type_size(mpi_handle, &n));
        return n;
    }
    void Get_extent(Aint &lb, Aint &extent) const
    {
        detail::check(MPI_Type_get_extent(mpi_handle, &lb, &extent));
    }
    void Get_true_extent(Aint &true_lb, Aint &true_extent) const
    {
        detail::check(MPI_Type_get_true_extent(mpi_handle, &true_lb, &true_extent));
    }
    void Get_envelope(int &num_integers, int &num_addresses, int &num_datatypes,
                      int &combiner) const
    {
        detail::check(MPI_Type_get_envelope(mpi_handle, &num_integers, &num_addresses,
                                            &num_datatypes, &combiner));
    }
    void Get_contents(int max_integers, int max_addresses, int max_datatypes, int integers[],
                      Aint addresses[], Datatype datatypes[]) const
    {
        detail::scratch<MPI_Datatype> c(max_datatypes);
        detail::check(MPI_Type_get_contents(mpi_handle, max_integers, max_addresses, max_datatypes,
                                            integers, addresses, c.get()));
        int ni = 0, na = 0, nd = 0, comb = 0;
        detail::check(MPI_Type_get_envelope(mpi_handle, &ni, &na, &nd, &comb));
        for (int i = 0; i < nd && i < max_datatypes; i++) datatypes[i] = c[i];
    }
    void Get_name(char *type_name, int &resultlen) const
    {
        detail::check(MPI_Type_get_name(mpi_handle, type_name, &resultlen));
    }
    void Set_name(const char *type_name)
    {
        detail::check(MPI_Type_set_name(mpi_handle, type_name));
    }
    inline void Pack(const void *inbuf, int incount, void *outbuf, int outsize, int &position,
                     const Comm &comm) const;
    inline void Unpack(const void *inbuf, int insize, void *outbuf, int outcount, int &position,
                       const Comm &comm) const;
    inline int Pack_size(int incount, const Comm &comm) const;
    void Pack_external(const char *datarep, const void *inbuf, int incount, void *outbuf,
                       Aint outsize, Aint &position) const
    {
        detail::check(
            MPI_Pack_external(datarep, inbuf, incount, mpi_handle, outbuf, outsize, &position));
    }
    void Unpack_external(const char *datarep, const void *inbuf, Aint insize, Aint &position,
                         void *outbuf, int outcount) const
    {
        detail::check(
            MPI_Unpack_external(datarep, inbuf, insize, &position, outbuf, outcount, mpi_handle));
    }
    Aint Pack_external_size(const char *datarep, int incount) const
    {
        Aint n = 0;
        detail::check(MPI_Pack_external_size(datarep, incount, mpi_handle, &n));
        return n;
    }
    static int Create_keyval(Copy_attr_function *copy_fn, Delete_attr_function *delete_fn,
                             void *extra_state);
    static void Free_keyval(int &type_keyval)
    {
        detail::check(MPI_Type_free_keyval(&type_keyval));
    }
    void Set_attr(int type_keyval, const void *attribute_val)
    {
        detail::check(
            MPI_Type_set_attr(mpi_handle, type_keyval, const_cast<void *>(attribute_val)));
    }
    bool Get_attr(int type_keyval, void *attribute_val) const
    {
        int flag = 0;
        detail::check(MPI_Type_get_attr(mpi_handle, type_keyval, attribute_val, &flag));
        return flag != 0;
    }
    void Delete_attr(int type_keyval)
    {
        detail::check(MPI_Type_delete_attr(mpi_handle, type_keyval));
    }
    static int NULL_COPY_FN(const Datatype &, int, void *, void *, void *, bool &flag)
    {
        flag = false;
        return MPI_SUCCESS;
    }
    static int DUP_FN(const Datatype &, int, void *, void *attribute_val_in,
                      void *attribute_val_out, bool &flag)
    {
        *static_cast<void **>(attribute_val_out) = attribute_val_in;
        flag = true;
        return MPI_SUCCESS;
    }
    static int NULL_DELETE_FN(Datatype &, int, void *, void *)
    {
        return MPI_SUCCESS;
    }
};

/* ---- Status ------------------------------------------------------------------ */
class Status
{
  public:
    Status() : mpi_status()
    {
        mpi_status.MPI_SOURCE = MPI_ANY_SOURCE;
        mpi_status.MPI_TAG = MPI_ANY_TAG;
        mpi_status.MPI_ERROR = MPI_SUCCESS;
    }
    Status(const MPI_Status &s) : mpi_status(s) {}
    Status(const Status &s) : mpi_status(s.mpi_status) {}
    Status &operator=(const Status &s)
    {
        mpi_status = s.mpi_status;
        return *this;
    }
    Status &operator=(const MPI_Status &s)
    {
        mpi_status = s;
        return *this;
    }
    operator MPI_Status() const
    {
        return mpi_status;
    }
    operator MPI_Status *()
    {
        return &mpi_status;
    }
    operator const MPI_Status *() const
    {
        return &mpi_status;
    }

    int Get_source() const
    {
        return mpi_status.MPI_SOURCE;
    }
    int Get_tag() const
    {
        return mpi_status.MPI_TAG;
    }
    int Get_error() const
    {
        return mpi_status.MPI_ERROR;
    }
    void Set_source(int source)
    {
        mpi_status.MPI_SOURCE = source;
    }
    void Set_tag(int tag)
    {
        mpi_status.MPI_TAG = tag;
    }
    void Set_error(int error)
    {
        mpi_status.MPI_ERROR = error;
    }
    int Get_count(const Datatype &datatype) const
    {
        int n = 0;
        detail::check(MPI_Get_count(&mpi_status, datatype, &n));
        return n;
    }
    int Get_elements(const Datatype &datatype) const
    {
        int n = 0;
        detail::check(MPI_Get_elements(&mpi_status, datatype, &n));
        return n;
    }
    void Set_elements(const Datatype &datatype, int count)
    {
        detail::check(MPI_Status_set_elements(&mpi_status, datatype, count));
    }
    bool Is_cancelled() const
    {
        int flag = 0;
        detail::check(MPI_Test_cancelled(&mpi_status, &flag));
        return flag != 0;
    }
    void Set_cancelled(bool flag)
    {
        detail::check(MPI_Status_set_cancelled(&mpi_status, flag));
    }

    MPI_Status mpi_status; /* public, as the C status is */
};

/* ---- Group ------------------------------------------------------------------- */
class Group : public detail::handle<Group, MPI_Group, MPI_GROUP_NULL>
{
  public:
    constexpr Group() {}
    constexpr Group(MPI_Group h) : handle(h) {}
    using handle::operator=;

    int Get_size() const
    {
        int n = 0;
        detail::check(MPI_Group_size(mpi_handle, &n));
        return n;
    }
    int Get_rank() const
    {
        int r = 0;
        detail::check(MPI_Group_rank(mpi_handle, &r));
        return r;
    }
    static void Translate_ranks(const Group &group1, int n, const int ranks1[], const Group &group2,
                                int ranks2[])
    {
        detail::check(
            MPI_Group_translate_ranks(group1.mpi_handle, n, ranks1, group2.mpi_handle, ranks2));
    }
    static int Compare(const Group &group1, const Group &group2)
    {
        int r = 0;
        detail::check(MPI_Group_compare(group1.mpi_handle, group2.mpi_handle, &r));
        return r;
    }
    static Group Union(const Group &group1, const Group &group2)
    {
        Group g;
        detail::check(MPI_Group_union(group1.mpi_handle, group2.mpi_handle, &g.mpi_handle));
        return g;
    }
    static Group Intersect(const Group &group1, const Group &group2)
    {
        Group g;
        detail::check(MPI_Group_intersection(group1.mpi_handle, group2.mpi_handle, &g.mpi_handle));
        return g;
    }
    static Group Difference(const Group &group1, const Group &group2)
    {
        Group g;
        detail::check(MPI_Group_difference(group1.mpi_handle, group2.mpi_handle, &g.mpi_handle));
        return g;
    }
    Group Incl(int n, const int ranks[]) const
    {
        Group g;
        detail::check(MPI_Group_incl(mpi_handle, n, ranks, &g.mpi_handle));
        return g;
    }
    Group Excl(int n, const int ranks[]) const
    {
        Group g;
        detail::check(MPI_Group_excl(mpi_handle, n, ranks, &g.mpi_handle));
        return g;
    }
    Group Range_incl(int n, const int ranges[][3]) const
    {
        Group g;
        detail::check(
            MPI_Group_range_incl(mpi_handle, n, const_cast<int(*)[3]>(ranges), &g.mpi_handle));
        return g;
    }
    Group Range_excl(int n, const int ranges[][3]) const
    {
        Group g;
        detail::check(
            MPI_Group_range_excl(mpi_handle, n, const_cast<int(*)[3]>(ranges), &g.mpi_handle));
        return g;
    }
    void Free()
    {
        detail::check(MPI_Group_free(&mpi_handle));
    }
};

/* ---- Op ---------------------------------------------------------------------- */
class Op : public detail::handle<Op, MPI_Op, MPI_OP_NULL>
{
  public:
    typedef void User_function(const void *invec, void *inoutvec, int len,
                               const Datatype &datatype);

    constexpr Op() {}
    constexpr Op(MPI_Op h) : handle(h) {}
    using handle::operator=;

    inline void Init(User_function *function, bool commute);
    inline void Free();
    bool Is_commutative() const
    {
        int c = 0;
        detail::check(MPI_Op_commutative(mpi_handle, &c));
        return c != 0;
    }
    void Reduce_local(const void *inbuf, void *inoutbuf, int count, const Datatype &datatype) const
    {
        detail::check(MPI_Reduce_local(inbuf, inoutbuf, count, datatype, mpi_handle));
    }
};

/* ---- Errhandler -------------------------------------------------------------- */
class Errhandler
{
  public:
    constexpr Errhandler() : mpi_errhandler(MPI_ERRHANDLER_NULL) {}
    constexpr Errhandler(MPI_Errhandler e) : mpi_errhandler(e) {}
    Errhandler(const Errhandler &e) : mpi_errhandler(e.mpi_errhandler) {}
    Errhandler &operator=(const Errhandler &e)
    {
        mpi_errhandler = e.mpi_errhandler;
        return *this;
    }
    Errhandler &operator=(const MPI_Errhandler &e)
    {
        mpi_errhandler = e;
        return *this;
    }
    bool operator==(const Errhandler &e) const
    {
        return detail::errh_from_c(mpi_errhandler) == detail::errh_from_c(e.mpi_errhandler);
    }
    bool operator!=(const Errhandler &e) const
    {
        return !(*this == e);
    }
    /* The C handle (ERRORS_THROW_EXCEPTIONS: courier's handler behind it). */
    operator MPI_Errhandler() const
    {
        return detail::errh_to_c(mpi_errhandler);
    }

    void Free()
    {
        if (mpi_errhandler == detail::throw_sentinel) {
            mpi_errhandler = MPI_ERRHANDLER_NULL;
            return;
        }
        detail::check(MPI_Errhandler_free(&mpi_errhandler));
    }

  protected:
    MPI_Errhandler mpi_errhandler;
};

/* ---- Info -------------------------------------------------------------------- */
class Info : public detail::handle<Info, MPI_Info, MPI_INFO_NULL>
{
  public:
    constexpr Info() {}
    constexpr Info(MPI_Info h) : handle(h) {}
    using handle::operator=;

    static Info Create()
    {
        Info i;
        detail::check(MPI_Info_create(&i.mpi_handle));
        return i;
    }
    void Set(const char *key, const char *value)
    {
        detail::check(MPI_Info_set(mpi_handle, key, value));
    }
    bool Get(const char *key, int valuelen, char *value) const
    {
        int flag = 0;
        detail::check(MPI_Info_get(mpi_handle, key, valuelen, value, &flag));
        return flag != 0;
    }
    void Delete(const char *key)
    {
        detail::check(MPI_Info_delete(mpi_handle, key));
    }
    bool Get_valuelen(const char *key, int &valuelen) const
    {
        int flag = 0;
        detail::check(MPI_Info_get_valuelen(mpi_handle, key, &valuelen, &flag));
        return flag != 0;
    }
    int Get_nkeys() const
    {
        int n = 0;
        detail::check(MPI_Info_get_nkeys(mpi_handle, &n));
        return n;
    }
    void Get_nthkey(int n, char *key) const
    {
        detail::check(MPI_Info_get_nthkey(mpi_handle, n, key));
    }
    Info Dup() const
    {
        Info i;
        detail::check(MPI_Info_dup(mpi_handle, &i.mpi_handle));
        return i;
    }
    void Free()
    {
        detail::check(MPI_Info_free(&mpi_handle));
    }
};

/* ---- Request, Prequest, Grequest --------------------------------------------- */
class Request : public detail::handle<Request, MPI_Request, MPI_REQUEST_NULL>
{
  public:
    constexpr Request() {}
    constexpr Request(MPI_Request h) : handle(h) {}
    using handle::operator=;

    void Wait(Status &status)
    {
        detail::check(MPI_Wait(&mpi_handle, &status.mpi_status));
    }
    void Wait()
    {
        detail::check(MPI_Wait(&mpi_handle, MPI_STATUS_IGNORE));
    }
    bool Test(Status &status)
    {
        int flag = 0;
        detail::check(MPI_Test(&mpi_handle, &flag, &status.mpi_status));
        return flag != 0;
    }
    bool Test()
    {
        int flag = 0;
        detail::check(MPI_Test(&mpi_handle, &flag, MPI_STATUS_IGNORE));
        return flag != 0;
    }
    void Free()
    {
        detail::check(MPI_Request_free(&mpi_handle));
    }
    void Cancel() const
    {
        MPI_Request r = mpi_handle;
        detail::check(MPI_Cancel(&r));
    }
    bool Get_status(Status &status) const
    {
        int flag = 0;
        detail::check(MPI_Request_get_status(mpi_handle, &flag, &status.mpi_status));
        return flag != 0;
    }
    bool Get_status() const
    {
        int flag = 0;
        detail::check(MPI_Request_get_status(mpi_handle, &flag, MPI_STATUS_IGNORE));
        return flag != 0;
    }

    static int Waitany(int count, Request array[], Status &status)
    {
        return any(count, array, &status.mpi_status, 0);
    }
    static int Waitany(int count, Request array[])
    {
        return any(count, array, MPI_STATUS_IGNORE, 0);
    }
    static bool Testany(int count, Request array[], int &index, Status &status)
    {
        int flag = 0;
        index = any(count, array, &status.mpi_status, &flag);
        return flag != 0;
    }
    static bool Testany(int count, Request array[], int &index)
    {
        int flag = 0;
        index = any(count, array, MPI_STATUS_IGNORE, &flag);
        return flag != 0;
    }
    static void Waitall(int count, Request array[], Status statuses[])
    {
        all(count, array, statuses, 0);
    }
    static void Waitall(int count, Request array[])
    {
        all(count, array, 0, 0);
    }
    static bool Testall(int count, Request array[], Status statuses[])
    {
        int flag = 0;
        all(count, array, statuses, &flag);
        return flag != 0;
    }
    static bool Testall(int count, Request array[])
    {
        int flag = 0;
        all(count, array, 0, &flag);
        return flag != 0;
    }
    static int Waitsome(int incount, Request array[], int indices[], Status statuses[])
    {
        return some(incount, array, indices, statuses, false);
    }
    static int Waitsome(int incount, Request array[], int indices[])
    {
        return some(incount, array, indices, 0, false);
    }
    static int Testsome(int incount, Request array[], int indices[], Status statuses[])
    {
        return some(incount, array, indices, statuses, true);
    }
    static int Testsome(int incount, Request array[], int indices[])
    {
        return some(incount, array, indices, 0, true);
    }

  private:
    static int any(int count, Request array[], MPI_Status *status, int *flag)
    {
        detail::scratch<MPI_Request> r(count);
        for (int i = 0; i < count; i++) r[i] = array[i].mpi_handle;
        int index = MPI_UNDEFINED;
        int rc = flag ? MPI_Testany(count, r.get(), &index, flag, status)
                      : MPI_Waitany(count, r.get(), &index, status);
        for (int i = 0; i < count; i++) array[i].mpi_handle = r[i];
        detail::check(rc);
        return index;
    }
    static void all(int count, Request array[], Status statuses[], int *flag)
    {
        detail::scratch<MPI_Request> r(count);
        detail::scratch<MPI_Status> s(statuses ? count : 0);
        for (int i = 0; i < count; i++) r[i] = array[i].mpi_handle;
        MPI_Status *sp = statuses ? s.get() : MPI_STATUSES_IGNORE;
        int rc = flag ? MPI_Testall(count, r.get(), flag, sp) : MPI_Waitall(count, r.get(), sp);
        for (int i = 0; i < count; i++) array[i].mpi_handle = r[i];
        if (statuses && (!flag || *flag || rc == MPI_ERR_IN_STATUS))
            for (int i = 0; i < count; i++) statuses[i].mpi_status = s[i];
        detail::check(rc);
    }
    static int some(int incount, Request array[], int indices[], Status statuses[], bool test)
    {
        detail::scratch<MPI_Request> r(incount);
        detail::scratch<MPI_Status> s(statuses ? incount : 0);
        for (int i = 0; i < incount; i++) r[i] = array[i].mpi_handle;
        MPI_Status *sp = statuses ? s.get() : MPI_STATUSES_IGNORE;
        int outcount = MPI_UNDEFINED;
        int rc = test ? MPI_Testsome(incount, r.get(), &outcount, indices, sp)
                      : MPI_Waitsome(incount, r.get(), &outcount, indices, sp);
        for (int i = 0; i < incount; i++) array[i].mpi_handle = r[i];
        if (statuses && outcount != MPI_UNDEFINED)
            for (int i = 0; i < outcount; i++) statuses[i].mpi_status = s[i];
        detail::check(rc);
        return outcount;
    }
};

class Prequest : public Request
{
  public:
    constexpr Prequest() : Request() {}
    using Request::Request;
    Prequest(const Request &r) : Request(r) {}
    Prequest &operator=(const Request &r)
    {
        mpi_handle = MPI_Request(r);
        return *this;
    }
    Prequest &operator=(const MPI_Request &r)
    {
        mpi_handle = r;
        return *this;
    }
    void Start()
    {
        detail::check(MPI_Start(&mpi_handle));
    }
    static void Startall(int count, Prequest array[])
    {
        detail::scratch<MPI_Request> r(count);
        for (int i = 0; i < count; i++) r[i] = array[i].mpi_handle;
        int rc = MPI_Startall(count, r.get());
        for (int i = 0; i < count; i++) array[i].mpi_handle = r[i];
        detail::check(rc);
    }
};

class Grequest : public Request
{
  public:
    typedef int Query_function(void *extra_state, Status &status);
    typedef int Free_function(void *extra_state);
    typedef int Cancel_function(void *extra_state, bool complete);

    constexpr Grequest() : Request() {}
    using Request::Request;
    Grequest(const Request &r) : Request(r) {}
    Grequest &operator=(const Request &r)
    {
        mpi_handle = MPI_Request(r);
        return *this;
    }
    Grequest &operator=(const MPI_Request &r)
    {
        mpi_handle = r;
        return *this;
    }
    static Grequest Start(Query_function *query_fn, Free_function *free_fn,
                          Cancel_function *cancel_fn, void *extra_state);
    void Complete()
    {
        detail::check(MPI_Grequest_complete(mpi_handle));
    }
};

/* ---- Comm -------------------------------------------------------------------- */
class Comm : public detail::handle<Comm, MPI_Comm, MPI_COMM_NULL>
{
  public:
    typedef void Errhandler_function(Comm &, int *, ...);
    typedef Errhandler_function Errhandler_fn; /* the MPI-2.0 name */
    typedef int Copy_attr_function(const Comm &oldcomm, int comm_keyval, void *extra_state,
                                   void *attribute_val_in, void *attribute_val_out, bool &flag);
    typedef int Delete_attr_function(Comm &comm, int comm_keyval, void *attribute_val,
                                     void *extra_state);

    using handle::handle;
    virtual ~Comm() {}

    /* point-to-point */
    void Send(const void *buf, int count, const Datatype &datatype, int dest, int tag) const
    {
        detail::check(MPI_Send(buf, count, datatype, dest, tag, mpi_handle));
    }
    void Bsend(const void *buf, int count, const Datatype &datatype, int dest, int tag) const
    {
        detail::check(MPI_Bsend(buf, count, datatype, dest, tag, mpi_handle));
    }
    void Ssend(const void *buf, int count, const Datatype &datatype, int dest, int tag) const
    {
        detail::check(MPI_Ssend(buf, count, datatype, dest, tag, mpi_handle));
    }
    void Rsend(const void *buf, int count, const Datatype &datatype, int dest, int tag) const
    {
        detail::check(MPI_Rsend(buf, count, datatype, dest, tag, mpi_handle));
    }
    void Recv(void *buf, int count, const Datatype &datatype, int source, int tag,
              Status &status) const
    {
        detail::check(MPI_Recv(buf, count, datatype, source, tag, mpi_handle, &status.mpi_status));
    }
    void Recv(void *buf, int count, const Datatype &datatype, int source, int tag) const
    {
        detail::check(MPI_Recv(buf, count, datatype, source, tag, mpi_handle, MPI_STATUS_IGNORE));
    }
    Request Isend(const void *buf, int count, const Datatype &datatype, int dest, int tag) const
    {
        MPI_Request r = MPI_REQUEST_NULL;
        detail::check(MPI_Isend(buf, count, datatype, dest, tag, mpi_handle, &r));
        return Request(r);
    }
    Request Ibsend(const void *buf, int count, const Datatype &datatype, int dest, int tag) const
    {
        MPI_Request r = MPI_REQUEST_NULL;
        detail::check(MPI_Ibsend(buf, count, datatype, dest, tag, mpi_handle, &r));
        return Request(r);
    }
    Request Issend(const void *buf, int count, const Datatype &datatype, int dest, int tag) const
    {
        MPI_Request r = MPI_REQUEST_NULL;
        detail::check(MPI_Issend(buf, count, datatype, dest, tag, mpi_handle, &r));
        return Request(r);
    }
    Request Irsend(const void *buf, int count, const Datatype &datatype, int dest, int tag) const
    {
        MPI_Request r = MPI_REQUEST_NULL;
        detail::check(MPI_Irsend(buf, count, datatype, dest, tag, mpi_handle, &r));
        return Request(r);
    }
    Request Irecv(void *buf, int count, const Datatype &datatype, int source, int tag) const
    {
        MPI_Request r = MPI_REQUEST_NULL;
        detail::check(MPI_Irecv(buf, count, datatype, source, tag, mpi_handle, &r));
        return Request(r);
    }
    Prequest Send_init(const void *buf, int count, const Datatype &datatype, int dest,
                       int tag) const
    {
        MPI_Request r = MPI_REQUEST_NULL;
        detail::check(MPI_Send_init(buf, count, datatype, dest, tag, mpi_handle, &r));
        return Prequest(r);
    }
    Prequest Bsend_init(const void *buf, int count, const Datatype &datatype, int dest,
                        int tag) const
    {
        MPI_Request r = MPI_REQUEST_NULL;
        detail::check(MPI_Bsend_init(buf, count, datatype, dest, tag, mpi_handle, &r));
        return Prequest(r);
    }
    Prequest Ssend_init(const void *buf, int count, const Datatype &datatype, int dest,
                        int tag) const
    {
        MPI_Request r = MPI_REQUEST_NULL;
        detail::check(MPI_Ssend_init(buf, count, datatype, dest, tag, mpi_handle, &r));
        return Prequest(r);
    }
    Prequest Rsend_init(const void *buf, int count, const Datatype &datatype, int dest,
                        int tag) const
    {
        MPI_Request r = MPI_REQUEST_NULL;
        detail::check(MPI_Rsend_init(buf, count, datatype, dest, tag, mpi_handle, &r));
        return Prequest(r);
    }
    Prequest Recv_init(void *buf, int count, const Datatype &datatype, int source, int tag) const
    {
        MPI_Request r = MPI_REQUEST_NULL;
        detail::check(MPI_Recv_init(buf, count, datatype, source, tag, mpi_handle, &r));
        return Prequest(r);
    }
    void Sendrecv(const void *sendbuf, int sendcount, const Datatype &sendtype, int dest,
                  int sendtag, void *recvbuf, int recvcount, const Datatype &recvtype, int source,
                  int recvtag, Status &status) const
    {
        detail::check(MPI_Sendrecv(sendbuf, sendcount, sendtype, dest, sendtag, recvbuf, recvcount,
                                   recvtype, source, recvtag, mpi_handle, &status.mpi_status));
    }
    void Sendrecv(const void *sendbuf, int sendcount, const Datatype &sendtype, int dest,
                  int sendtag, void *recvbuf, int recvcount, const Datatype &recvtype, int source,
                  int recvtag) const
    {
        detail::check(MPI_Sendrecv(sendbuf, sendcount, sendtype, dest, sendtag, recvbuf, recvcount,
                                   recvtype, source, recvtag, mpi_handle, MPI_STATUS_IGNORE));
    }
    void Sendrecv_replace(void *buf, int count, const Datatype &datatype, int dest, int sendtag,
                          int source, int recvtag, Status &status) const
    {
        detail::check(MPI_Sendrecv_replace(buf, count, datatype, dest, sendtag, source, recvtag,
                                           mpi_handle, &status.mpi_status));
    }
    void Sendrecv_replace(void *buf, int count, const Datatype &datatype, int dest, int sendtag,
                          int source, int recvtag) const
    {
        detail::check(MPI_Sendrecv_replace(buf, count, datatype, dest, sendtag, source, recvtag,
                                           mpi_handle, MPI_STATUS_IGNORE));
    }
    void Probe(int source, int tag, Status &status) const
    {
        detail::check(MPI_Probe(source, tag, mpi_handle, &status.mpi_status));
    }
    void Probe(int source, int tag) const
    {
        detail::check(MPI_Probe(source, tag, mpi_handle, MPI_STATUS_IGNORE));
    }
    bool Iprobe(int source, int tag, Status &status) const
    {
        int flag = 0;
        detail::check(MPI_Iprobe(source, tag, mpi_handle, &flag, &status.mpi_status));
        return flag != 0;
    }
    bool Iprobe(int source, int tag) const
    {
        int flag = 0;
        detail::check(MPI_Iprobe(source, tag, mpi_handle, &flag, MPI_STATUS_IGNORE));
        return flag != 0;
    }

    /* groups, names, management */
    int Get_size() const
    {
        int n = 0;
        detail::check(MPI_Comm_size(mpi_handle, &n));
        return n;
    }
    int Get_rank() const
    {
        int r = 0;
        detail::check(MPI_Comm_rank(mpi_handle, &r));
        return r;
    }
    Group Get_group() const
    {
        MPI_Group g = MPI_GROUP_NULL;
        detail::check(MPI_Comm_group(mpi_handle, &g));
        return Group(g);
    }
    static int Compare(const Comm &comm1, const Comm &comm2)
    {
        int r = 0;
        detail::check(MPI_Comm_compare(comm1.mpi_handle, comm2.mpi_handle, &r));
        return r;
    }
    virtual Comm &Clone() const = 0;
    void Free()
    {
        detail::check(MPI_Comm_free(&mpi_handle));
    }
    bool Is_inter() const
    {
        int flag = 0;
        detail::check(MPI_Comm_test_inter(mpi_handle, &flag));
        return flag != 0;
    }
    int Get_topology() const
    {
        int t = MPI_UNDEFINED;
        detail::check(MPI_Topo_test(mpi_handle, &t));
        return t;
    }
    void Set_name(const char *comm_name)
    {
        detail::check(MPI_Comm_set_name(mpi_handle, comm_name));
    }
    void Get_name(char *comm_name, int &resultlen) const
    {
        detail::check(MPI_Comm_get_name(mpi_handle, comm_name, &resultlen));
    }
    void Abort(int errorcode) const
    {
        detail::check(MPI_Abort(mpi_handle, errorcode));
    }
    void Disconnect()
    {
        detail::check(MPI_Comm_disconnect(&mpi_handle));
    }
    static Intercomm Get_parent();
    static Intercomm Join(const int fd);

    /* collectives (both kinds of communicators) */
    void Barrier() const
    {
        detail::check(MPI_Barrier(mpi_handle));
    }
    void Bcast(void *buffer, int count, const Datatype &datatype, int root) const
    {
        detail::check(MPI_Bcast(buffer, count, datatype, root, mpi_handle));
    }
    void Gather(const void *sendbuf, int sendcount, const Datatype &sendtype, void *recvbuf,
                int recvcount, const Datatype &recvtype, int root) const
    {
        detail::check(MPI_Gather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root,
                                 mpi_handle));
    }
    void Gatherv(const void *sendbuf, int sendcount, const Datatype &sendtype, void *recvbuf,
                 const int recvcounts[], const int displs[], const Datatype &recvtype,
                 int root) const
    {
        detail::check(MPI_Gatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs,
                                  recvtype, root, mpi_handle));
    }
    void Scatter(const void *sendbuf, int sendcount, const Datatype &sendtype, void *recvbuf,
                 int recvcount, const Datatype &recvtype, int root) const
    {
        detail::check(MPI_Scatter(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root,
                                  mpi_handle));
    }
    void Scatterv(const void *sendbuf, const int sendcounts[], const int displs[],
                  const Datatype &sendtype, void *recvbuf, int recvcount, const Datatype &recvtype,
                  int root) const
    {
        detail::check(MPI_Scatterv(sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount,
                                   recvtype, root, mpi_handle));
    }
    void Allgather(const void *sendbuf, int sendcount, const Datatype &sendtype, void *recvbuf,
                   int recvcount, const Datatype &recvtype) const
    {
        detail::check(
            MPI_Allgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, mpi_handle));
    }
    void Allgatherv(const void *sendbuf, int sendcount, const Datatype &sendtype, void *recvbuf,
                    const int recvcounts[], const int displs[], const Datatype &recvtype) const
    {
        detail::check(MPI_Allgatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs,
                                     recvtype, mpi_handle));
    }
    void Alltoall(const void *sendbuf, int sendcount, const Datatype &sendtype, void *recvbuf,
                  int recvcount, const Datatype &recvtype) const
    {
        detail::check(
            MPI_Alltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, mpi_handle));
    }
    void Alltoallv(const void *sendbuf, const int sendcounts[], const int sdispls[],
                   const Datatype &sendtype, void *recvbuf, const int recvcounts[],
                   const int rdispls[], const Datatype &recvtype) const
    {
        detail::check(MPI_Alltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts,
                                    rdispls, recvtype, mpi_handle));
    }
    void Alltoallw(const void *sendbuf, const int sendcounts[], const int sdispls[],
                   const Datatype sendtypes[], void *recvbuf, const int recvcounts[],
                   const int rdispls[], const Datatype recvtypes[]) const
    {
        int n = 0, inter = 0;
        detail::check(MPI_Comm_test_inter(mpi_handle, &inter));
        detail::check(inter ? MPI_Comm_remote_size(mpi_handle, &n) : MPI_Comm_size(mpi_handle, &n));
        detail::scratch<MPI_Datatype> st(n), rt(n);
        for (int i = 0; i < n; i++) {
            st[i] = sendbuf == MPI_IN_PLACE ? MPI_DATATYPE_NULL : MPI_Datatype(sendtypes[i]);
            rt[i] = recvtypes[i];
        }
        detail::check(MPI_Alltoallw(sendbuf, sendcounts, sdispls, st.get(), recvbuf, recvcounts,
                                    rdispls, rt.get(), mpi_handle));
    }
    void Reduce(const void *sendbuf, void *recvbuf, int count, const Datatype &datatype,
                const Op &op, int root) const
    {
        detail::check(MPI_Reduce(sendbuf, recvbuf, count, datatype, op, root, mpi_handle));
    }
    void Allreduce(const void *sendbuf, void *recvbuf, int count, const Datatype &datatype,
                   const Op &op) const
    {
        detail::check(MPI_Allreduce(sendbuf, recvbuf, count, datatype, op, mpi_handle));
    }
    void Reduce_scatter(const void *sendbuf, void *recvbuf, const int recvcounts[],
                        const Datatype &datatype, const Op &op) const
    {
        detail::check(MPI_Reduce_scatter(sendbuf, recvbuf, recvcounts, datatype, op, mpi_handle));
    }
    void Reduce_scatter_block(const void *sendbuf, void *recvbuf, int recvcount,
                              const Datatype &datatype, const Op &op) const
    {
        detail::check(
            MPI_Reduce_scatter_block(sendbuf, recvbuf, recvcount, datatype, op, mpi_handle));
    }

    /* errors */
    static Errhandler Create_errhandler(Errhandler_function *function);
    void Set_errhandler(const Errhandler &errhandler) const
    {
        detail::check(MPI_Comm_set_errhandler(mpi_handle, errhandler));
    }
    Errhandler Get_errhandler() const
    {
        MPI_Errhandler e = MPI_ERRHANDLER_NULL;
        detail::check(MPI_Comm_get_errhandler(mpi_handle, &e));
        return Errhandler(detail::errh_from_c(e));
    }
    void Call_errhandler(int errorcode) const
    {
        detail::check_called(MPI_Comm_call_errhandler(mpi_handle, errorcode), errorcode);
    }

    /* attributes */
    static int Create_keyval(Copy_attr_function *copy_fn, Delete_attr_function *delete_fn,
                             void *extra_state);
    static void Free_keyval(int &comm_keyval)
    {
        detail::check(MPI_Comm_free_keyval(&comm_keyval));
    }
    void Set_attr(int comm_keyval, const void *attribute_val) const
    {
        detail::check(
            MPI_Comm_set_attr(mpi_handle, comm_keyval, const_cast<void *>(attribute_val)));
    }
    bool Get_attr(int comm_keyval, void *attribute_val) const
    {
        int flag = 0;
        detail::check(MPI_Comm_get_attr(mpi_handle, comm_keyval, attribute_val, &flag));
        return flag != 0;
    }
    void Delete_attr(int comm_keyval)
    {
        detail::check(MPI_Comm_delete_attr(mpi_handle, comm_keyval));
    }
    static int NULL_COPY_FN(const Comm &, int, void *, void *, void *, bool &flag)
    {
        flag = false;
        return MPI_SUCCESS;
    }
    static int DUP_FN(const Comm &, int, void *, void *attribute_val_in, void *attribute_val_out,
                      bool &flag)
    {
        *static_cast<void **>(attribute_val_out) = attribute_val_in;
        flag = true;
        return MPI_SUCCESS;
    }
    static int NULL_DELETE_FN(Comm &, int, void *, void *)
    {
        return MPI_SUCCESS;
    }

  protected:
    Comm &operator=(const Comm &) = default;
};

/* The type of COMM_NULL: compares equal to, and assigns to, every communicator. */
class Nullcomm : public Comm
{
  public:
    constexpr Nullcomm() : Comm() {}
    explicit constexpr Nullcomm(MPI_Comm c) : Comm(c) {}
    virtual Nullcomm &Clone() const
    {
        return *new Nullcomm();
    }
};

class Intercomm : public Comm
{
  public:
    constexpr Intercomm() : Comm() {}
    constexpr Intercomm(MPI_Comm c) : Comm(c) {}
    Intercomm(const Nullcomm &c) : Comm(c) {}
    Intercomm &operator=(const Nullcomm &c)
    {
        mpi_handle = MPI_Comm(c);
        return *this;
    }
    Intercomm &operator=(const MPI_Comm &c)
    {
        mpi_handle = c;
        return *this;
    }
    Intercomm Dup() const
    {
        MPI_Comm c = MPI_COMM_NULL;
        detail::check(MPI_Comm_dup(mpi_handle, &c));
        return Intercomm(c);
    }
    virtual Intercomm &Clone() const
    {
        MPI_Comm c = MPI_COMM_NULL;
        detail::check(MPI_Comm_dup(mpi_handle, &c));
        return *new Intercomm(c);
    }
    int Get_remote_size() const
    {
        int n = 0;
        detail::check(MPI_Comm_remote_size(mpi_handle, &n));
        return n;
    }
    Group Get_remote_group() const
    {
        MPI_Group g = MPI_GROUP_NULL;
        detail::check(MPI_Comm_remote_group(mpi_handle, &g));
        return Group(g);
    }
    inline Intracomm Merge(bool high) const;
    Intercomm Create(const Group &group) const
    {
        MPI_Comm c = MPI_COMM_NULL;
        detail::check(MPI_Comm_create(mpi_handle, group, &c));
        return Intercomm(c);
    }
    Intercomm Split(int color, int key) const
    {
        MPI_Comm c = MPI_COMM_NULL;
        detail::check(MPI_Comm_split(mpi_handle, color, key, &c));
        return Intercomm(c);
    }
};

class Intracomm : public Comm
{
  public:
    constexpr Intracomm() : Comm() {}
    constexpr Intracomm(MPI_Comm c) : Comm(c) {}
    Intracomm(const Nullcomm &c) : Comm(c) {}
    Intracomm &operator=(const Nullcomm &c)
    {
        mpi_handle = MPI_Comm(c);
        return *this;
    }
    Intracomm &operator=(const MPI_Comm &c)
    {
        mpi_handle = c;
        return *this;
    }
    Intracomm Dup() const
    {
        MPI_Comm c = MPI_COMM_NULL;
        detail::check(MPI_Comm_dup(mpi_handle, &c));
        return Intracomm(c);
    }
    virtual Intracomm &Clone() const
    {
        MPI_Comm c = MPI_COMM_NULL;
        detail::check(MPI_Comm_dup(mpi_handle, &c));
        return *new Intracomm(c);
    }
    Intracomm Create(const Group &group) const
    {
        MPI_Comm c = MPI_COMM_NULL;
        detail::check(MPI_Comm_create(mpi_handle, group, &c));
        return Intracomm(c);
    }
    Intracomm Split(int color, int key) const
    {
        MPI_Comm c = MPI_COMM_NULL;
        detail::check(MPI_Comm_split(mpi_handle, color, key, &c));
        return Intracomm(c);
    }
    Intercomm Create_intercomm(int local_leader, const Comm &peer_comm, int remote_leader,
                               int tag) const
    {
        MPI_Comm c = MPI_COMM_NULL;
        detail::check(
            MPI_Intercomm_create(mpi_handle, local_leader, peer_comm, remote_leader, tag, &c));
        return Intercomm(c);
    }
    inline Cartcomm Create_cart(int ndims, const int dims[], const bool periods[],
                                bool reorder) const;
    inline Graphcomm Create_graph(int nnodes, const int index[], const int edges[],
                                  bool reorder) const;
    inline Distgraphcomm Dist_graph_create(int n, const int sources[], const int degrees[],
                                           const int destinations[], const int weights[],
                                           const Info &info, bool reorder) const;
    inline Distgraphcomm Dist_graph_create(int n, const int sources[], const int degrees[],
                                           const int destinations[], const Info &info,
                                           bool reorder) const;
    inline Distgraphcomm Dist_graph_create_adjacent(int indegree, const int sources[],
                                                    const int sourceweights[], int outdegree,
                                                    const int destinations[],
                                                    const int destweights[], const Info &info,
                                                    bool reorder) const;
    inline Distgraphcomm Dist_graph_create_adjacent(int indegree, const int sources[],
                                                    int outdegree, const int destinations[],
                                                    const Info &info, bool reorder) const;
    void Scan(const void *sendbuf, void *recvbuf, int count, const Datatype &datatype,
              const Op &op) const
    {
        detail::check(MPI_Scan(sendbuf, recvbuf, count, datatype, op, mpi_handle));
    }
    void Exscan(const void *sendbuf, void *recvbuf, int count, const Datatype &datatype,
                const Op &op) const
    {
        detail::check(MPI_Exscan(sendbuf, recvbuf, count, datatype, op, mpi_handle));
    }
    Intercomm Accept(const char *port_name, const Info &info, int root) const
    {
        MPI_Comm c = MPI_COMM_NULL;
        detail::check(MPI_Comm_accept(port_name, info, root, mpi_handle, &c));
        return Intercomm(c);
    }
    Intercomm Connect(const char *port_name, const Info &info, int root) const
    {
        MPI_Comm c = MPI_COMM_NULL;
        detail::check(MPI_Comm_connect(port_name, info, root, mpi_handle, &c));
        return Intercomm(c);
    }
    Intercomm Spawn(const char *command, const char *argv[], int maxprocs, const Info &info,
                    int root) const
    {
        MPI_Comm c = MPI_COMM_NULL;
        detail::check(MPI_Comm_spawn(command, const_cast<char **>(argv), maxprocs, info, root,
                                     mpi_handle, &c, MPI_ERRCODES_IGNORE));
        return Intercomm(c);
    }
    Intercomm Spawn(const char *command, const char *argv[], int maxprocs, const Info &info,
                    int root, int array_of_errcodes[]) const
    {
        MPI_Comm c = MPI_COMM_NULL;
        detail::check(MPI_Comm_spawn(command, const_cast<char **>(argv), maxprocs, info, root,
                                     mpi_handle, &c, array_of_errcodes));
        return Intercomm(c);
    }
    Intercomm Spawn_multiple(int count, const char *array_of_commands[],
                             const char **array_of_argv[], const int array_of_maxprocs[],
                             const Info array_of_info[], int root) const
    {
        return spawn_multiple(count, array_of_commands, array_of_argv, array_of_maxprocs,
                              array_of_info, root, MPI_ERRCODES_IGNORE);
    }
    Intercomm Spawn_multiple(int count, const char *array_of_commands[],
                             const char **array_of_argv[], const int array_of_maxprocs[],
                             const Info array_of_info[], int root, int array_of_errcodes[]) const
    {
        return spawn_multiple(count, array_of_commands, array_of_argv, array_of_maxprocs,
                              array_of_info, root, array_of_errcodes);
    }

  private:
    Intercomm spawn_multiple(int count, const char *commands[], const char **argvs[],
                             const int maxprocs[], const Info infos[], int root,
                             int errcodes[]) const
    {
        detail::scratch<MPI_Info> ci(count);
        for (int i = 0; i < count; i++) ci[i] = infos[i];
        MPI_Comm c = MPI_COMM_NULL;
        detail::check(MPI_Comm_spawn_multiple(count, const_cast<char **>(commands),
                                              const_cast<char ***>(argvs), maxprocs, ci.get(), root,
                                              mpi_handle, &c, errcodes));
        return Intercomm(c);
    }
};

class Cartcomm : public Intracomm
{
  public:
    constexpr Cartcomm() : Intracomm() {}
    constexpr Cartcomm(MPI_Comm c) : Intracomm(c) {}
    Cartcomm(const Nullcomm &c) : Intracomm(c) {}
    Cartcomm &operator=(const Nullcomm &c)
    {
        mpi_handle = MPI_Comm(c);
        return *this;
    }
    Cartcomm &operator=(const MPI_Comm &c)
    {
        mpi_handle = c;
        return *this;
    }
    Cartcomm Dup() const
    {
        MPI_Comm c = MPI_COMM_NULL;
        detail::check(MPI_Comm_dup(mpi_handle, &c));
        return Cartcomm(c);
    }
    virtual Cartcomm &Clone() const
    {
        MPI_Comm c = MPI_COMM_NULL;
        detail::check(MPI_Comm_dup(mpi_handle, &c));
        return *new Cartcomm(c);
    }
    int Get_dim() const
    {
        int n = 0;
        detail::check(MPI_Cartdim_get(mpi_handle, &n));
        return n;
    }
    void Get_topo(int maxdims, int dims[], bool periods[], int coords[]) const
    {
        detail::scratch<int> p(maxdims);
        detail::check(MPI_Cart_get(mpi_handle, maxdims, dims, p.get(), coords));
        for (int i = 0; i < maxdims; i++) periods[i] = p[i] != 0;
    }
    int Get_cart_rank(const int coords[]) const
    {
        int r = 0;
        detail::check(MPI_Cart_rank(mpi_handle, coords, &r));
        return r;
    }
    void Get_coords(int rank, int maxdims, int coords[]) const
    {
        detail::check(MPI_Cart_coords(mpi_handle, rank, maxdims, coords));
    }
    void Shift(int direction, int disp, int &rank_source, int &rank_dest) const
    {
        detail::check(MPI_Cart_shift(mpi_handle, direction, disp, &rank_source, &rank_dest));
    }
    Cartcomm Sub(const bool remain_dims[]) const
    {
        int n = Get_dim();
        detail::scratch<int> r(n);
        for (int i = 0; i < n; i++) r[i] = remain_dims[i];
        MPI_Comm c = MPI_COMM_NULL;
        detail::check(MPI_Cart_sub(mpi_handle, r.get(), &c));
        return Cartcomm(c);
    }
    int Map(int ndims, const int dims[], const bool periods[]) const
    {
        detail::scratch<int> p(ndims);
        for (int i = 0; i < ndims; i++) p[i] = periods[i];
        int r = 0;
        detail::check(MPI_Cart_map(mpi_handle, ndims, dims, p.get(), &r));
        return r;
    }
};

class Graphcomm : public Intracomm
{
  public:
    constexpr Graphcomm() : Intracomm() {}
    constexpr Graphcomm(MPI_Comm c) : Intracomm(c) {}
    Graphcomm(const Nullcomm &c) : Intracomm(c) {}
    Graphcomm &operator=(const Nullcomm &c)
    {
        mpi_handle = MPI_Comm(c);
        return *this;
    }
    Graphcomm &operator=(const MPI_Comm &c)
    {
        mpi_handle = c;
        return *this;
    }
    Graphcomm Dup() const
    {
        MPI_Comm c = MPI_COMM_NULL;
        detail::check(MPI_Comm_dup(mpi_handle, &c));
        return Graphcomm(c);
    }
    virtual Graphcomm &Clone() const
    {
        MPI_Comm c = MPI_COMM_NULL;
        detail::check(MPI_Comm_dup(mpi_handle, &c));
        return *new Graphcomm(c);
    }
    void Get_dims(int nnodes[], int nedges[]) const
    {
        detail::check(MPI_Graphdims_get(mpi_handle, nnodes, nedges));
    }
    void Get_topo(int maxindex, int maxedges, int index[], int edges[]) const
    {
        detail::check(MPI_Graph_get(mpi_handle, maxindex, maxedges, index, edges));
    }
    int Get_neighbors_count(int rank) const
    {
        int n = 0;
        detail::check(MPI_Graph_neighbors_count(mpi_handle, rank, &n));
        return n;
    }
    void Get_neighbors(int rank, int maxneighbors, int neighbors[]) const
    {
        detail::check(MPI_Graph_neighbors(mpi_handle, rank, maxneighbors, neighbors));
    }
    int Map(int nnodes, const int index[], const int edges[]) const
    {
        int r = 0;
        detail::check(MPI_Graph_map(mpi_handle, nnodes, index, edges, &r));
        return r;
    }
};

class Distgraphcomm : public Intracomm
{
  public:
    constexpr Distgraphcomm() : Intracomm() {}
    constexpr Distgraphcomm(MPI_Comm c) : Intracomm(c) {}
    Distgraphcomm(const Nullcomm &c) : Intracomm(c) {}
    Distgraphcomm &operator=(const Nullcomm &c)
    {
        mpi_handle = MPI_Comm(c);
        return *this;
    }
    Distgraphcomm &operator=(const MPI_Comm &c)
    {
        mpi_handle = c;
        return *this;
    }
    Distgraphcomm Dup() const
    {
        MPI_Comm c = MPI_COMM_NULL;
        detail::check(MPI_Comm_dup(mpi_handle, &c));
        return Distgraphcomm(c);
    }
    virtual Distgraphcomm &Clone() const
    {
        MPI_Comm c = MPI_COMM_NULL;
        detail::check(MPI_Comm_dup(mpi_handle, &c));
        return *new Distgraphcomm(c);
    }
    void Get_dist_neighbors_count(int &indegree, int &outdegree, bool &weighted) const
    {
        int w = 0;
        detail::check(MPI_Dist_graph_neighbors_count(mpi_handle, &indegree, &outdegree, &w));
        weighted = w != 0;
    }
    void Get_dist_neighbors(int maxindegree, int sources[], int sourceweights[], int maxoutdegree,
                            int destinations[], int destweights[]) const
    {
        detail::check(MPI_Dist_graph_neighbors(mpi_handle, maxindegree, sources, sourceweights,
                                               maxoutdegree, destinations, destweights));
    }
    void Get_dist_neighbors(int maxindegree, int sources[], int maxoutdegree,
                            int destinations[]) const
    {
        detail::check(MPI_Dist_graph_neighbors(mpi_handle, maxindegree, sources, MPI_UNWEIGHTED,
                                               maxoutdegree, destinations, MPI_UNWEIGHTED));
    }
};

/* ---- Win --------------------------------------------------------------------- */
class Win : public detail::handle<Win, MPI_Win, MPI_WIN_NULL>
{
  public:
    typedef void Errhandler_function(Win &, int *, ...);
    typedef Errhandler_function Errhandler_fn;
    typedef int Copy_attr_function(const Win &oldwin, int win_keyval, void *extra_state,
                                   void *attribute_val_in, void *attribute_val_out, bool &flag);
    typedef int Delete_attr_function(Win &win, int win_keyval, void *attribute_val,
                                     void *extra_state);

    constexpr Win() {}
    constexpr Win(MPI_Win h) : handle(h) {}
    using handle::operator=;

    static Win Create(const void *base, Aint size, int disp_unit, const Info &info,
                      const Intracomm &comm)
    {
        MPI_Win w = MPI_WIN_NULL;
        detail::check(MPI_Win_create(const_cast<void *>(base), size, disp_unit, info, comm, &w));
        return Win(w);
    }
    void Free()
    {
        detail::check(MPI_Win_free(&mpi_handle));
    }
    Group Get_group() const
    {
        MPI_Group g = MPI_GROUP_NULL;
        detail::check(MPI_Win_get_group(mpi_handle, &g));
        return Group(g);
    }
    void Put(const void *origin_addr, int origin_count, const Datatype &origin_datatype,
             int target_rank, Aint target_disp, int target_count,
             const Datatype &target_datatype) const
    {
        detail::check(MPI_Put(origin_addr, origin_count, origin_datatype, target_rank, target_disp,
                              target_count, target_datatype, mpi_handle));
    }
    void Get(void *origin_addr, int origin_count, const Datatype &origin_datatype, int target_rank,
             Aint target_disp, int target_count, const Datatype &target_datatype) const
    {
        detail::check(MPI_Get(origin_addr, origin_count, origin_datatype, target_rank, target_disp,
                              target_count, target_datatype, mpi_handle));
    }
    void Accumulate(const void *origin_addr, int origin_count, const Datatype &origin_datatype,
                    int target_rank, Aint target_disp, int target_count,
                    const Datatype &target_datatype, const Op &op) const
    {
        detail::check(MPI_Accumulate(origin_addr, origin_count, origin_datatype, target_rank,
                                     target_disp, target_count, target_datatype, op, mpi_handle));
    }
    void Fence(int assert) const
    {
        detail::check(MPI_Win_fence(assert, mpi_handle));
    }
    void Start(const Group &group, int assert) const
    {
        detail::check(MPI_Win_start(group, assert, mpi_handle));
    }
    void Complete() const
    {
        detail::check(MPI_Win_complete(mpi_handle));
    }
    void Post(const Group &group, int assert) const
    {
        detail::check(MPI_Win_post(group, assert, mpi_handle));
    }
    void Wait() const
    {
        detail::check(MPI_Win_wait(mpi_handle));
    }
    bool Test() const
    {
        int flag = 0;
        detail::check(MPI_Win_test(mpi_handle, &flag));
        return flag != 0;
    }
    void Lock(int lock_type, int rank, int assert) const
    {
        detail::check(MPI_Win_lock(lock_type, rank, assert, mpi_handle));
    }
    void Unlock(int rank) const
    {
        detail::check(MPI_Win_unlock(rank, mpi_handle));
    }

    static Errhandler Create_errhandler(Errhandler_function *function);
    void Set_errhandler(const Errhandler &errhandler) const
    {
        detail::check(MPI_Win_set_errhandler(mpi_handle, errhandler));
    }
    Errhandler Get_errhandler() const
    {
        MPI_Errhandler e = MPI_ERRHANDLER_NULL;
        detail::check(MPI_Win_get_errhandler(mpi_handle, &e));
        return Errhandler(detail::errh_from_c(e));
    }
    void Call_errhandler(int errorcode) const
    {
        detail::check_called(MPI_Win_call_errhandler(mpi_handle, errorcode), errorcode);
    }
    void Set_name(const char *win_name)
    {
        detail::check(MPI_Win_set_name(mpi_handle, win_name));
    }
    void Get_name(char *win_name, int &resultlen) const
    {
        detail::check(MPI_Win_get_name(mpi_handle, win_name, &resultlen));
    }
    static int Create_keyval(Copy_attr_function *copy_fn, Delete_attr_function *delete_fn,
                             void *extra_state);
    static void Free_keyval(int &win_keyval)
    {
        detail::check(MPI_Win_free_keyval(&win_keyval));
    }
    void Set_attr(int win_keyval, const void *attribute_val)
    {
        detail::check(MPI_Win_set_attr(mpi_handle, win_keyval, const_cast<void *>(attribute_val)));
    }
    bool Get_attr(int win_keyval, void *attribute_val) const
    {
        int flag = 0;
        detail::check(MPI_Win_get_attr(mpi_handle, win_keyval, attribute_val, &flag));
        return flag != 0;
    }
    void Delete_attr(int win_keyval)
    {
        detail::check(MPI_Win_delete_attr(mpi_handle, win_keyval));
    }
    static int NULL_COPY_FN(const Win &, int, void *, void *, void *, bool &flag)
    {
        flag = false;
        return MPI_SUCCESS;
    }
    static int DUP_FN(const Win &, int, void *, void *attribute_val_in, void *attribute_val_out,
                      bool &flag)
    {
        *static_cast<void **>(attribute_val_out) = attribute_val_in;
        flag = true;
        return MPI_SUCCESS;
    }
    static int NULL_DELETE_FN(Win &, int, void *, void *)
    {
        return MPI_SUCCESS;
    }
};

/* ---- File -------------------------------------------------------------------- */
class File : public detail::handle<File, MPI_File, MPI_FILE_NULL>
{
  public:
    typedef void Errhandler_function(File &, int *, ...);
    typedef Errhandler_function Errhandler_fn;

    constexpr File() {}
    constexpr File(MPI_File h) : handle(h) {}
    using handle::operator=;

    static File Open(const Intracomm &comm, const char *filename, int amode, const Info &info)
    {
        MPI_File f = MPI_FILE_NULL;
        detail::check(MPI_File_open(comm, filename, amode, info, &f));
        return File(f);
    }
    void Close()
    {
        detail::check(MPI_File_close(&mpi_handle));
    }
    static void Delete(const char *filename, const Info &info)
    {
        detail::check(MPI_File_delete(filename, info));
    }
    void Set_size(Offset size)
    {
        detail::check(MPI_File_set_size(mpi_handle, size));
    }
    void Preallocate(Offset size)
    {
        detail::check(MPI_File_preallocate(mpi_handle, size));
    }
    Offset Get_size() const
    {
        Offset n = 0;
        detail::check(MPI_File_get_size(mpi_handle, &n));
        return n;
    }
    Group Get_group() const
    {
        MPI_Group g = MPI_GROUP_NULL;
        detail::check(MPI_File_get_group(mpi_handle, &g));
        return Group(g);
    }
    int Get_amode() const
    {
        int a = 0;
        detail::check(MPI_File_get_amode(mpi_handle, &a));
        return a;
    }
    void Set_info(const Info &info)
    {
        detail::check(MPI_File_set_info(mpi_handle, info));
    }
    Info Get_info() const
    {
        MPI_Info i = MPI_INFO_NULL;
        detail::check(MPI_File_get_info(mpi_handle, &i));
        return Info(i);
    }
    void Set_view(Offset disp, const Datatype &etype, const Datatype &filetype, const char *datarep,
                  const Info &info)
    {
        detail::check(MPI_File_set_view(mpi_handle, disp, etype, filetype, datarep, info));
    }
    void Get_view(Offset &disp, Datatype &etype, Datatype &filetype, char *datarep) const
    {
        MPI_Datatype e = MPI_DATATYPE_NULL, f = MPI_DATATYPE_NULL;
        detail::check(MPI_File_get_view(mpi_handle, &disp, &e, &f, datarep));
        etype = e;
        filetype = f;
    }
    Aint Get_type_extent(const Datatype &datatype) const
    {
        Aint e = 0;
        detail::check(MPI_File_get_type_extent(mpi_handle, datatype, &e));
        return e;
    }
    void Set_atomicity(bool flag)
    {
        detail::check(MPI_File_set_atomicity(mpi_handle, flag));
    }
    bool Get_atomicity() const
    {
        int flag = 0;
        detail::check(MPI_File_get_atomicity(mpi_handle, &flag));
        return flag != 0;
    }
    void Sync()
    {
        detail::check(MPI_File_sync(mpi_handle));
    }

    /* explicit offsets */
    void Read_at(Offset offset, void *buf, int count, const Datatype &datatype, Status &status)
    {
        detail::check(
            MPI_File_read_at(mpi_handle, offset, buf, count, datatype, &status.mpi_status));
    }
    void Read_at(Offset offset, void *buf, int count, const Datatype &datatype)
    {
        detail::check(
            MPI_File_read_at(mpi_handle, offset, buf, count, datatype, MPI_STATUS_IGNORE));
    }
    void Read_at_all(Offset offset, void *buf, int count, const Datatype &datatype, Status &status)
    {
        detail::check(
            MPI_File_read_at_all(mpi_handle, offset, buf, count, datatype, &status.mpi_status));
    }
    void Read_at_all(Offset offset, void *buf, int count, const Datatype &datatype)
    {
        detail::check(
            MPI_File_read_at_all(mpi_handle, offset, buf, count, datatype, MPI_STATUS_IGNORE));
    }
    void Write_at(Offset offset, const void *buf, int count, const Datatype &datatype,
                  Status &status)
    {
        detail::check(
            MPI_File_write_at(mpi_handle, offset, buf, count, datatype, &status.mpi_status));
    }
    void Write_at(Offset offset, const void *buf, int count, const Datatype &datatype)
    {
        detail::check(
            MPI_File_write_at(mpi_handle, offset, buf, count, datatype, MPI_STATUS_IGNORE));
    }
    void Write_at_all(Offset offset, const void *buf, int count, const Datatype &datatype,
                      Status &status)
    {
        detail::check(
            MPI_File_write_at_all(mpi_handle, offset, buf, count, datatype, &status.mpi_status));
    }
    void Write_at_all(Offset offset, const void *buf, int count, const Datatype &datatype)
    {
        detail::check(
            MPI_File_write_at_all(mpi_handle, offset, buf, count, datatype, MPI_STATUS_IGNORE));
    }
    Request Iread_at(Offset offset, void *buf, int count, const Datatype &datatype)
    {
        MPI_Request r = MPI_REQUEST_NULL;
        detail::check(MPI_File_iread_at(mpi_handle, offset, buf, count, datatype, &r));
        return Request(r);
    }
    Request Iwrite_at(Offset offset, const void *buf, int count, const Datatype &datatype)
    {
        MPI_Request r = MPI_REQUEST_NULL;
        detail::check(MPI_File_iwrite_at(mpi_handle, offset, buf, count, datatype, &r));
        return Request(r);
    }

    /* individual file pointers */
    void Read(void *buf, int count, const Datatype &datatype, Status &status)
    {
        detail::check(MPI_File_read(mpi_handle, buf, count, datatype, &status.mpi_status));
    }
    void Read(void *buf, int count, const Datatype &datatype)
    {
        detail::check(MPI_File_read(mpi_handle, buf, count, datatype, MPI_STATUS_IGNORE));
    }
    void Read_all(void *buf, int count, const Datatype &datatype, Status &status)
    {
        detail::check(MPI_File_read_all(mpi_handle, buf, count, datatype, &status.mpi_status));
    }
    void Read_all(void *buf, int count, const Datatype &datatype)
    {
        detail::check(MPI_File_read_all(mpi_handle, buf, count, datatype, MPI_STATUS_IGNORE));
    }
    void Write(const void *buf, int count, const Datatype &datatype, Status &status)
    {
        detail::check(MPI_File_write(mpi_handle, buf, count, datatype, &status.mpi_status));
    }
    void Write(const void *buf, int count, const Datatype &datatype)
    {
        detail::check(MPI_File_write(mpi_handle, buf, count, datatype, MPI_STATUS_IGNORE));
    }
    void Write_all(const void *buf, int count, const Datatype &datatype, Status &status)
    {
        detail::check(MPI_File_write_all(mpi_handle, buf, count, datatype, &status.mpi_status));
    }
    void Write_all(const void *buf, int count, const Datatype &datatype)
    {
        detail::check(MPI_File_write_all(mpi_handle, buf, count, datatype, MPI_STATUS_IGNORE));
    }
    Request Iread(void *buf, int count, const Datatype &datatype)
    {
        MPI_Request r = MPI_REQUEST_NULL;
        detail::check(MPI_File_iread(mpi_handle, buf, count, datatype, &r));
        return Request(r);
    }
    Request Iwrite(const void *buf, int count, const Datatype &datatype)
    {
        MPI_Request r = MPI_REQUEST_NULL;
        detail::check(MPI_File_iwrite(mpi_handle, buf, count, datatype, &r));
        return Request(r);
    }
    void Seek(Offset offset, int whence)
    {
        detail::check(MPI_File_seek(mpi_handle, offset, whence));
    }
    Offset Get_position() const
    {
        Offset o = 0;
        detail::check(MPI_File_get_position(mpi_handle, &o));
        return o;
    }
    Offset Get_byte_offset(const Offset offset) const
    {
        Offset d = 0;
        detail::check(MPI_File_get_byte_offset(mpi_handle, offset, &d));
        return d;
    }

    /* the shared file pointer */
    void Read_shared(void *buf, int count, const Datatype &datatype, Status &status)
    {
        detail::check(MPI_File_read_shared(mpi_handle, buf, count, datatype, &status.mpi_status));
    }
    void Read_shared(void *buf, int count, const Datatype &datatype)
    {
        detail::check(MPI_File_read_shared(mpi_handle, buf, count, datatype, MPI_STATUS_IGNORE));
    }
    void Write_shared(const void *buf, int count, const Datatype &datatype, Status &status)
    {
        detail::check(MPI_File_write_shared(mpi_handle, buf, count, datatype, &status.mpi_status));
    }
    void Write_shared(const void *buf, int count, const Datatype &datatype)
    {
        detail::check(MPI_File_write_shared(mpi_handle, buf, count, datatype, MPI_STATUS_IGNORE));
    }
    Request Iread_shared(void *buf, int count, const Datatype &datatype)
    {
        MPI_Request r = MPI_REQUEST_NULL;
        detail::check(MPI_File_iread_shared(mpi_handle, buf, count, datatype, &r));
        return Request(r);
    }
    Request Iwrite_shared(const void *buf, int count, const Datatype &datatype)
    {
        MPI_Request r = MPI_REQUEST_NULL;
        detail::check(MPI_File_iwrite_shared(mpi_handle, buf, count, datatype, &r));
        return Request(r);
    }
    void Read_ordered(void *buf, int count, const Datatype &datatype, Status &status)
    {
        detail::check(MPI_File_read_ordered(mpi_handle, buf, count, datatype, &status.mpi_status));
    }
    void Read_ordered(void *buf, int count, const Datatype &datatype)
    {
        detail::check(MPI_File_read_ordered(mpi_handle, buf, count, datatype, MPI_STATUS_IGNORE));
    }
    void Write_ordered(const void *buf, int count, const Datatype &datatype, Status &status)
    {
        detail::check(MPI_File_write_ordered(mpi_handle, buf, count, datatype, &status.mpi_status));
    }
    void Write_ordered(const void *buf, int count, const Datatype &datatype)
    {
        detail::check(MPI_File_write_ordered(mpi_handle, buf, count, datatype, MPI_STATUS_IGNORE));
    }
    void Seek_shared(Offset offset, int whence)
    {
        detail::check(MPI_File_seek_shared(mpi_handle, offset, whence));
    }
    Offset Get_position_shared() const
    {
        Offset o = 0;
        detail::check(MPI_File_get_position_shared(mpi_handle, &o));
        return o;
    }

    /* split collectives */
    void Read_at_all_begin(Offset offset, void *buf, int count, const Datatype &datatype)
    {
        detail::check(MPI_File_read_at_all_begin(mpi_handle, offset, buf, count, datatype));
    }
    void Read_at_all_end(void *buf, Status &status)
    {
        detail::check(MPI_File_read_at_all_end(mpi_handle, buf, &status.mpi_status));
    }
    void Read_at_all_end(void *buf)
    {
        detail::check(MPI_File_read_at_all_end(mpi_handle, buf, MPI_STATUS_IGNORE));
    }
    void Write_at_all_begin(Offset offset, const void *buf, int count, const Datatype &datatype)
    {
        detail::check(MPI_File_write_at_all_begin(mpi_handle, offset, buf, count, datatype));
    }
    void Write_at_all_end(const void *buf, Status &status)
    {
        detail::check(MPI_File_write_at_all_end(mpi_handle, buf, &status.mpi_status));
    }
    void Write_at_all_end(const void *buf)
    {
        detail::check(MPI_File_write_at_all_end(mpi_handle, buf, MPI_STATUS_IGNORE));
    }
    void Read_all_begin(void *buf, int count, const Datatype &datatype)
    {
        detail::check(MPI_File_read_all_begin(mpi_handle, buf, count, datatype));
    }
    void Read_all_end(void *buf, Status &status)
    {
        detail::check(MPI_File_read_all_end(mpi_handle, buf, &status.mpi_status));
    }
    void Read_all_end(void *buf)
    {
        detail::check(MPI_File_read_all_end(mpi_handle, buf, MPI_STATUS_IGNORE));
    }
    void Write_all_begin(const void *buf, int count, const Datatype &datatype)
    {
        detail::check(MPI_File_write_all_begin(mpi_handle, buf, count, datatype));
    }
    void Write_all_end(const void *buf, Status &status)
    {
        detail::check(MPI_File_write_all_end(mpi_handle, buf, &status.mpi_status));
    }
    void Write_all_end(const void *buf)
    {
        detail::check(MPI_File_write_all_end(mpi_handle, buf, MPI_STATUS_IGNORE));
    }
    void Read_ordered_begin(void *buf, int count, const Datatype &datatype)
    {
        detail::check(MPI_File_read_ordered_begin(mpi_handle, buf, count, datatype));
    }
    void Read_ordered_end(void *buf, Status &status)
    {
        detail::check(MPI_File_read_ordered_end(mpi_handle, buf, &status.mpi_status));
    }
    void Read_ordered_end(void *buf)
    {
        detail::check(MPI_File_read_ordered_end(mpi_handle, buf, MPI_STATUS_IGNORE));
    }
    void Write_ordered_begin(const void *buf, int count, const Datatype &datatype)
    {
        detail::check(MPI_File_write_ordered_begin(mpi_handle, buf, count, datatype));
    }
    void Write_ordered_end(const void *buf, Status &status)
    {
        detail::check(MPI_File_write_ordered_end(mpi_handle, buf, &status.mpi_status));
    }
    void Write_ordered_end(const void *buf)
    {
        detail::check(MPI_File_write_ordered_end(mpi_handle, buf, MPI_STATUS_IGNORE));
    }

    static Errhandler Create_errhandler(Errhandler_function *function);
    void Set_errhandler(const Errhandler &errhandler) const
    {
        detail::check(MPI_File_set_errhandler(mpi_handle, errhandler));
    }
    Errhandler Get_errhandler() const
    {
        MPI_Errhandler e = MPI_ERRHANDLER_NULL;
        detail::check(MPI_File_get_errhandler(mpi_handle, &e));
        return Errhandler(detail::errh_from_c(e));
    }
    void Call_errhandler(int errorcode) const
    {
        detail::check_called(MPI_File_call_errhandler(mpi_handle, errorcode), errorcode);
    }
};

/* ---- definitions that needed the later classes ------------------------------ */
inline void Datatype::Pack(const void *inbuf, int incount, void *outbuf, int outsize, int &position,
                           const Comm &comm) const
{
    detail::check(MPI_Pack(inbuf, incount, mpi_handle, outbuf, outsize, &position, comm));
}
inline void Datatype::Unpack(const void *inbuf, int insize, void *outbuf, int outcount,
                             int &position, const Comm &comm) const
{
    detail::check(MPI_Unpack(inbuf, insize, &position, outbuf, outcount, mpi_handle, comm));
}
inline int Datatype::Pack_size(int incount, const Comm &comm) const
{
    int n = 0;
    detail::check(MPI_Pack_size(incount, mpi_handle, comm, &n));
    return n;
}

inline Intercomm Comm::Get_parent()
{
    MPI_Comm c = MPI_COMM_NULL;
    detail::check(MPI_Comm_get_parent(&c));
    return Intercomm(c);
}
inline Intercomm Comm::Join(const int fd)
{
    MPI_Comm c = MPI_COMM_NULL;
    detail::check(MPI_Comm_join(fd, &c));
    return Intercomm(c);
}
inline Intracomm Intercomm::Merge(bool high) const
{
    MPI_Comm c = MPI_COMM_NULL;
    detail::check(MPI_Intercomm_merge(mpi_handle, high, &c));
    return Intracomm(c);
}
inline Cartcomm Intracomm::Create_cart(int ndims, const int dims[], const bool periods[],
                                       bool reorder) const
{
    detail::scratch<int> p(ndims);
    for (int i = 0; i < ndims; i++) p[i] = periods[i];
    MPI_Comm c = MPI_COMM_NULL;
    detail::check(MPI_Cart_create(mpi_handle, ndims, dims, p.get(), reorder, &c));
    return Cartcomm(c);
}
inline Graphcomm Intracomm::Create_graph(int nnodes, const int index[], const int edges[],
                                         bool reorder) const
{
    MPI_Comm c = MPI_COMM_NULL;
    detail::check(MPI_Graph_create(mpi_handle, nnodes, index, edges, reorder, &c));
    return Graphcomm(c);
}
inline Distgraphcomm Intracomm::Dist_graph_create(int n, const int sources[], const int degrees[],
                                                  const int destinations[], const int weights[],
                                                  const Info &info, bool reorder) const
{
    MPI_Comm c = MPI_COMM_NULL;
    detail::check(MPI_Dist_graph_create(mpi_handle, n, sources, degrees, destinations, weights,
                                        info, reorder, &c));
    return Distgraphcomm(c);
}
inline Distgraphcomm Intracomm::Dist_graph_create(int n, const int sources[], const int degrees[],
                                                  const int destinations[], const Info &info,
                                                  bool reorder) const
{
    MPI_Comm c = MPI_COMM_NULL;
    detail::check(MPI_Dist_graph_create(mpi_handle, n, sources, degrees, destinations,
                                        MPI_UNWEIGHTED, info, reorder, &c));
    return Distgraphcomm(c);
}
inline Distgraphcomm Intracomm::Dist_graph_create_adjacent(int indegree, const int sources[],
                                                           const int sourceweights[], int outdegree,
                                                           const int destinations[],
                                                           const int destweights[],
                                                           const Info &info, bool reorder) const
{
    MPI_Comm c = MPI_COMM_NULL;
    detail::check(MPI_Dist_graph_create_adjacent(mpi_handle, indegree, sources, sourceweights,
                                                 outdegree, destinations, destweights, info,
                                                 reorder, &c));
    return Distgraphcomm(c);
}
inline Distgraphcomm Intracomm::Dist_graph_create_adjacent(int indegree, const int sources[],
                                                           int outdegree, const int destinations[],
                                                           const Info &info, bool reorder) const
{
    MPI_Comm c = MPI_COMM_NULL;
    detail::check(MPI_Dist_graph_create_adjacent(mpi_handle, indegree, sources, MPI_UNWEIGHTED,
                                                 outdegree, destinations, MPI_UNWEIGHTED, info,
                                                 reorder, &c));
    return Distgraphcomm(c);
}

/* ---- trampolines: C callbacks calling the C++ user functions ----------------- */
namespace detail
{

/* A communicator handed to a user function, as the class it is. */
template <typename Fn> inline void with_comm(MPI_Comm c, Fn fn)
{
    int inter = 0;
    if (c != MPI_COMM_NULL && MPI_Comm_test_inter(c, &inter) == MPI_SUCCESS && inter) {
        Intercomm ic(c);
        fn(static_cast<Comm &>(ic));
    } else {
        Intracomm ic(c);
        fn(static_cast<Comm &>(ic));
    }
}

/* User operations: OPS_MAX slots, one C trampoline each. */
enum { OPS_MAX = 128, ERRH_MAX = 64 };
struct op_slot {
    Op::User_function *fn;
    MPI_Op op;
};
inline op_slot *op_slots()
{
    static op_slot t[OPS_MAX];
    return t;
}
template <int I> void op_trampoline(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    COURIER_CXX_TRY
    {
        Datatype d(*dt);
        op_slots()[I].fn(in, inout, *len, d);
    }
    COURIER_CXX_CATCH
    {
        defer_current_exception();
    }
}
template <int I> struct op_fill {
    static void run(MPI_User_function **t)
    {
        t[I - 1] = &op_trampoline<I - 1>;
        op_fill<I - 1>::run(t);
    }
};
template <> struct op_fill<0> {
    static void run(MPI_User_function **) {}
};
inline MPI_User_function **op_trampolines()
{
    static MPI_User_function *t[OPS_MAX];
    static bool filled = (op_fill<OPS_MAX>::run(t), true);
    (void)filled;
    return t;
}

/* User error handlers: ERRH_MAX per kind, kept for the run (a freed handler
 * stays in force on the objects that have it). */
inline void call_errh(Comm::Errhandler_function *fn, int *obj, int *code)
{
    struct call {
        Comm::Errhandler_function *f;
        int *c;
        void operator()(Comm &comm) const
        {
            f(comm, c);
        }
    } k = {fn, code};
    with_comm(*obj, k);
}
inline void call_errh(Win::Errhandler_function *fn, int *obj, int *code)
{
    Win w(*obj);
    fn(w, code);
}
inline void call_errh(File::Errhandler_function *fn, int *obj, int *code)
{
    File f(*obj);
    fn(f, code);
}
template <typename Fn> inline Fn **errh_slots()
{
    static Fn *t[ERRH_MAX];
    return t;
}
template <typename Fn, int I> void errh_trampoline(int *obj, int *code, ...)
{
    COURIER_CXX_TRY
    {
        call_errh(errh_slots<Fn>()[I], obj, code);
    }
    COURIER_CXX_CATCH
    {
        defer_current_exception();
    }
}
template <typename Fn, int I> struct errh_fill {
    static void run(MPI_Comm_errhandler_function **t)
    {
        t[I - 1] = (MPI_Comm_errhandler_function *)&errh_trampoline<Fn, I - 1>;
        errh_fill<Fn, I - 1>::run(t);
    }
};
template <typename Fn> struct errh_fill<Fn, 0> {
    static void run(MPI_Comm_errhandler_function **) {}
};
template <typename Fn> inline MPI_Errhandler create_errhandler(Fn *function)
{
    static MPI_Comm_errhandler_function *tramp[ERRH_MAX];
    static bool filled = (errh_fill<Fn, ERRH_MAX>::run(tramp), true);
    (void)filled;
    int slot = -1;
    {
        spin_lock lock;
        Fn **t = errh_slots<Fn>();
        for (int i = 0; i < ERRH_MAX && slot < 0; i++)
            if (!t[i] || t[i] == function) slot = i;
        if (slot >= 0) t[slot] = function;
    }
    if (slot < 0) {
        fail(MPI_ERR_INTERN);
        return MPI_ERRHANDLER_NULL;
    }
    MPI_Errhandler e = MPI_ERRHANDLER_NULL;
    check(MPI_Comm_create_errhandler(tramp[slot], &e));
    return e;
}

/* Attribute keyvals: the C++ functions ride in the keyval's extra state. */
template <typename Copy, typename Del> struct keyval_rec {
    Copy *copy;
    Del *del;
    void *extra;
};
typedef keyval_rec<Comm::Copy_attr_function, Comm::Delete_attr_function> comm_keyval;
typedef keyval_rec<Win::Copy_attr_function, Win::Delete_attr_function> win_keyval;
typedef keyval_rec<Datatype::Copy_attr_function, Datatype::Delete_attr_function> type_keyval;

inline int comm_copy_trampoline(MPI_Comm oldcomm, int keyval, void *extra, void *in, void *out,
                                int *flag)
{
    comm_keyval *k = static_cast<comm_keyval *>(extra);
    int rc = MPI_SUCCESS;
    *flag = 0;
    if (!k->copy) return rc;
    COURIER_CXX_TRY
    {
        struct call {
            comm_keyval *k;
            int kv;
            void *in, *out;
            int *flag;
            int *rc;
            void operator()(Comm &c) const
            {
                bool b = false;
                *rc = k->copy(c, kv, k->extra, in, out, b);
                *flag = b;
            }
        } f = {k, keyval, in, out, flag, &rc};
        with_comm(oldcomm, f);
    }
    COURIER_CXX_CATCH
    {
        defer_current_exception();
        rc = MPI_ERR_OTHER;
    }
    return rc;
}
inline int comm_delete_trampoline(MPI_Comm comm, int keyval, void *val, void *extra)
{
    comm_keyval *k = static_cast<comm_keyval *>(extra);
    int rc = MPI_SUCCESS;
    if (!k->del) return rc;
    COURIER_CXX_TRY
    {
        struct call {
            comm_keyval *k;
            int kv;
            void *val;
            int *rc;
            void operator()(Comm &c) const
            {
                *rc = k->del(c, kv, val, k->extra);
            }
        } f = {k, keyval, val, &rc};
        with_comm(comm, f);
    }
    COURIER_CXX_CATCH
    {
        defer_current_exception();
        rc = MPI_ERR_OTHER;
    }
    return rc;
}
template <typename Obj, typename Rec>
inline int copy_trampoline(int old, int keyval, void *extra, void *in, void *out, int *flag)
{
    Rec *k = static_cast<Rec *>(extra);
    int rc = MPI_SUCCESS;
    *flag = 0;
    if (!k->copy) return rc;
    COURIER_CXX_TRY
    {
        Obj o(old);
        bool b = false;
        rc = k->copy(o, keyval, k->extra, in, out, b);
        *flag = b;
    }
    COURIER_CXX_CATCH
    {
        defer_current_exception();
        rc = MPI_ERR_OTHER;
    }
    return rc;
}
template <typename Obj, typename Rec>
inline int delete_trampoline(int obj, int keyval, void *val, void *extra)
{
    Rec *k = static_cast<Rec *>(extra);
    int rc = MPI_SUCCESS;
    if (!k->del) return rc;
    COURIER_CXX_TRY
    {
        Obj o(obj);
        rc = k->del(o, keyval, val, k->extra);
    }
    COURIER_CXX_CATCH
    {
        defer_current_exception();
        rc = MPI_ERR_OTHER;
    }
    return rc;
}

/* Generalized requests. */
struct greq_rec {
    Grequest::Query_function *query;
    Grequest::Free_function *free;
    Grequest::Cancel_function *cancel;
    void *extra;
};
inline int greq_query(void *extra, MPI_Status *status)
{
    greq_rec *g = static_cast<greq_rec *>(extra);
    COURIER_CXX_TRY
    {
        Status s(*status);
        int rc = g->query(g->extra, s);
        *status = s.mpi_status;
        return rc;
    }
    COURIER_CXX_CATCH
    {
        defer_current_exception();
        return MPI_ERR_OTHER;
    }
}
inline int greq_free(void *extra)
{
    greq_rec *g = static_cast<greq_rec *>(extra);
    int rc = MPI_SUCCESS;
    COURIER_CXX_TRY
    {
        rc = g->free(g->extra);
    }
    COURIER_CXX_CATCH
    {
        defer_current_exception();
        rc = MPI_ERR_OTHER;
    }
    delete g;
    return rc;
}
inline int greq_cancel(void *extra, int complete)
{
    greq_rec *g = static_cast<greq_rec *>(extra);
    COURIER_CXX_TRY
    {
        return g->cancel(g->extra, complete != 0);
    }
    COURIER_CXX_CATCH
    {
        defer_current_exception();
        return MPI_ERR_OTHER;
    }
}

} // namespace detail

inline void Op::Init(User_function *function, bool commute)
{
    MPI_User_function **tramp = detail::op_trampolines();
    int slot = -1;
    {
        detail::spin_lock lock;
        detail::op_slot *t = detail::op_slots();
        for (int i = 0; i < detail::OPS_MAX && slot < 0; i++)
            if (!t[i].fn) slot = i;
        if (slot >= 0) {
            t[slot].fn = function;
            t[slot].op = MPI_OP_NULL;
        }
    }
    if (slot < 0) {
        detail::fail(MPI_ERR_INTERN);
        return;
    }
    int rc = MPI_Op_create(tramp[slot], commute, &mpi_handle);
    {
        detail::spin_lock lock;
        if (rc == MPI_SUCCESS)
            detail::op_slots()[slot].op = mpi_handle;
        else
            detail::op_slots()[slot].fn = 0;
    }
    detail::check(rc);
}
inline void Op::Free()
{
    MPI_Op old = mpi_handle;
    int rc = MPI_Op_free(&mpi_handle);
    if (rc == MPI_SUCCESS) {
        detail::spin_lock lock;
        detail::op_slot *t = detail::op_slots();
        for (int i = 0; i < detail::OPS_MAX; i++)
            if (t[i].fn && t[i].op == old) {
                t[i].fn = 0;
                t[i].op = MPI_OP_NULL;
            }
    }
    detail::check(rc);
}

inline Errhandler Comm::Create_errhandler(Errhandler_function *function)
{
    return Errhandler(detail::create_errhandler(function));
}
inline Errhandler Win::Create_errhandler(Errhandler_function *function)
{
    return Errhandler(detail::create_errhandler(function));
}
inline Errhandler File::Create_errhandler(Errhandler_function *function)
{
    return Errhandler(detail::create_errhandler(function));
}

inline int Comm::Create_keyval(Copy_attr_function *copy_fn, Delete_attr_function *delete_fn,
                               void *extra_state)
{
    detail::comm_keyval *k = new detail::comm_keyval;
    k->copy = copy_fn;
    k->del = delete_fn;
    k->extra = extra_state;
    int keyval = MPI_KEYVAL_INVALID;
    int rc = MPI_Comm_create_keyval(detail::comm_copy_trampoline, detail::comm_delete_trampoline,
                                    &keyval, k);
    if (rc != MPI_SUCCESS) delete k;
    detail::check(rc);
    return keyval;
}
inline int Win::Create_keyval(Copy_attr_function *copy_fn, Delete_attr_function *delete_fn,
                              void *extra_state)
{
    detail::win_keyval *k = new detail::win_keyval;
    k->copy = copy_fn;
    k->del = delete_fn;
    k->extra = extra_state;
    int keyval = MPI_KEYVAL_INVALID;
    int rc = MPI_Win_create_keyval(detail::copy_trampoline<Win, detail::win_keyval>,
                                   detail::delete_trampoline<Win, detail::win_keyval>, &keyval, k);
    if (rc != MPI_SUCCESS) delete k;
    detail::check(rc);
    return keyval;
}
inline int Datatype::Create_keyval(Copy_attr_function *copy_fn, Delete_attr_function *delete_fn,
                                   void *extra_state)
{
    detail::type_keyval *k = new detail::type_keyval;
    k->copy = copy_fn;
    k->del = delete_fn;
    k->extra = extra_state;
    int keyval = MPI_KEYVAL_INVALID;
    int rc = MPI_Type_create_keyval(detail::copy_trampoline<Datatype, detail::type_keyval>,
                                    detail::delete_trampoline<Datatype, detail::type_keyval>,
                                    &keyval, k);
    if (rc != MPI_SUCCESS) delete k;
    detail::check(rc);
    return keyval;
}

inline Grequest Grequest::Start(Query_function *query_fn, Free_function *free_fn,
                                Cancel_function *cancel_fn, void *extra_state)
{
    detail::greq_rec *g = new detail::greq_rec;
    g->query = query_fn;
    g->free = free_fn;
    g->cancel = cancel_fn;
    g->extra = extra_state;
    MPI_Request r = MPI_REQUEST_NULL;
    int rc = MPI_Grequest_start(detail::greq_query, detail::greq_free, detail::greq_cancel, g, &r);
    if (rc != MPI_SUCCESS) delete g;
    detail::check(rc);
    return Grequest(r);
}

/* ---- data representations ---------------------------------------------------- */
typedef int Datarep_conversion_function(void *userbuf, Datatype &datatype, int count, void *filebuf,
                                        Offset position, void *extra_state);
typedef int Datarep_extent_function(const Datatype &datatype, Aint &file_extent, void *extra_state);

namespace detail
{
struct datarep_rec {
    Datarep_conversion_function *read, *write;
    Datarep_extent_function *extent;
    void *extra;
};
inline int datarep_convert(Datarep_conversion_function *fn, void *userbuf, MPI_Datatype dt,
                           int count, void *filebuf, MPI_Offset position, void *extra)
{
    COURIER_CXX_TRY
    {
        Datatype d(dt);
        return fn(userbuf, d, count, filebuf, position, extra);
    }
    COURIER_CXX_CATCH
    {
        defer_current_exception();
        return MPI_ERR_OTHER;
    }
}
inline int datarep_read(void *userbuf, MPI_Datatype dt, int count, void *filebuf,
                        MPI_Offset position, void *extra)
{
    datarep_rec *d = static_cast<datarep_rec *>(extra);
    return datarep_convert(d->read, userbuf, dt, count, filebuf, position, d->extra);
}
inline int datarep_write(void *userbuf, MPI_Datatype dt, int count, void *filebuf,
                         MPI_Offset position, void *extra)
{
    datarep_rec *d = static_cast<datarep_rec *>(extra);
    return datarep_convert(d->write, userbuf, dt, count, filebuf, position, d->extra);
}
inline int datarep_extent(MPI_Datatype dt, MPI_Aint *file_extent, void *extra)
{
    datarep_rec *d = static_cast<datarep_rec *>(extra);
    COURIER_CXX_TRY
    {
        Datatype t(dt);
        return d->extent(t, *file_extent, d->extra);
    }
    COURIER_CXX_CATCH
    {
        defer_current_exception();
        return MPI_ERR_OTHER;
    }
}
} // namespace detail

COURIER_CXX_OBJ Datarep_conversion_function *const CONVERSION_FN_NULL = 0;

inline void Register_datarep(const char *datarep, Datarep_conversion_function *read_conversion_fn,
                             Datarep_conversion_function *write_conversion_fn,
                             Datarep_extent_function *dtype_file_extent_fn, void *extra_state)
{
    detail::datarep_rec *d = new detail::datarep_rec;
    d->read = read_conversion_fn;
    d->write = write_conversion_fn;
    d->extent = dtype_file_extent_fn;
    d->extra = extra_state;
    int rc = MPI_Register_datarep(datarep, read_conversion_fn ? detail::datarep_read : 0,
                                  write_conversion_fn ? detail::datarep_write : 0,
                                  detail::datarep_extent, d);
    if (rc != MPI_SUCCESS) delete d;
    detail::check(rc);
}

/* ---- free functions ---------------------------------------------------------- */
inline void Init()
{
    detail::check(MPI_Init(0, 0));
}
inline void Init(int &argc, char **&argv)
{
    detail::check(MPI_Init(&argc, &argv));
}
inline int Init_thread(int required)
{
    int provided = MPI_THREAD_SINGLE;
    detail::check(MPI_Init_thread(0, 0, required, &provided));
    return provided;
}
inline int Init_thread(int &argc, char **&argv, int required)
{
    int provided = MPI_THREAD_SINGLE;
    detail::check(MPI_Init_thread(&argc, &argv, required, &provided));
    return provided;
}
inline void Finalize()
{
    /* The throwing handler is the binding's to free (courier --check=leaks). */
    MPI_Errhandler h =
        __atomic_exchange_n(&detail::throw_handle_slot(), MPI_ERRHANDLER_NULL, __ATOMIC_ACQ_REL);
    if (h != MPI_ERRHANDLER_NULL) MPI_Errhandler_free(&h);
    detail::check(MPI_Finalize());
}
inline bool Is_initialized()
{
    int flag = 0;
    detail::check(MPI_Initialized(&flag));
    return flag != 0;
}
inline bool Is_finalized()
{
    int flag = 0;
    detail::check(MPI_Finalized(&flag));
    return flag != 0;
}
inline int Query_thread()
{
    int provided = MPI_THREAD_SINGLE;
    detail::check(MPI_Query_thread(&provided));
    return provided;
}
inline bool Is_thread_main()
{
    int flag = 0;
    detail::check(MPI_Is_thread_main(&flag));
    return flag != 0;
}
inline double Wtime()
{
    return MPI_Wtime();
}
inline double Wtick()
{
    return MPI_Wtick();
}
inline void Get_processor_name(char *name, int &resultlen)
{
    detail::check(MPI_Get_processor_name(name, &resultlen));
}
inline void Get_version(int &version, int &subversion)
{
    detail::check(MPI_Get_version(&version, &subversion));
}
inline void Compute_dims(int nnodes, int ndims, int dims[])
{
    detail::check(MPI_Dims_create(nnodes, ndims, dims));
}
inline void Attach_buffer(void *buffer, int size)
{
    detail::check(MPI_Buffer_attach(buffer, size));
}
inline int Detach_buffer(void *&buffer)
{
    int size = 0;
    detail::check(MPI_Buffer_detach(&buffer, &size));
    return size;
}
inline int Get_error_class(int errorcode)
{
    int c = MPI_ERR_UNKNOWN;
    detail::check(MPI_Error_class(errorcode, &c));
    return c;
}
inline void Get_error_string(int errorcode, char *name, int &resultlen)
{
    detail::check(MPI_Error_string(errorcode, name, &resultlen));
}
inline int Add_error_class()
{
    int c = 0;
    detail::check(MPI_Add_error_class(&c));
    return c;
}
inline int Add_error_code(int errorclass)
{
    int c = 0;
    detail::check(MPI_Add_error_code(errorclass, &c));
    return c;
}
inline void Add_error_string(int errorcode, const char *string)
{
    detail::check(MPI_Add_error_string(errorcode, string));
}
inline void Pcontrol(const int level, ...)
{
    MPI_Pcontrol(level);
}
inline Aint Get_address(const void *location)
{
    Aint a = 0;
    detail::check(MPI_Get_address(location, &a));
    return a;
}
inline void *Alloc_mem(Aint size, const Info &info)
{
    void *base = 0;
    detail::check(MPI_Alloc_mem(size, info, &base));
    return base;
}
inline void Free_mem(void *base)
{
    detail::check(MPI_Free_mem(base));
}
inline void Open_port(const Info &info, char *port_name)
{
    detail::check(MPI_Open_port(info, port_name));
}
inline void Close_port(const char *port_name)
{
    detail::check(MPI_Close_port(port_name));
}
inline void Publish_name(const char *service_name, const Info &info, const char *port_name)
{
    detail::check(MPI_Publish_name(service_name, info, port_name));
}
inline void Unpublish_name(const char *service_name, const Info &info, const char *port_name)
{
    detail::check(MPI_Unpublish_name(service_name, info, port_name));
}
inline void Lookup_name(const char *service_name, const Info &info, char *port_name)
{
    detail::check(MPI_Lookup_name(service_name, info, port_name));
}

/* ---- predefined objects ------------------------------------------------------ */
COURIER_CXX_OBJ Intracomm COMM_WORLD(MPI_COMM_WORLD);
COURIER_CXX_OBJ Intracomm COMM_SELF(MPI_COMM_SELF);
COURIER_CXX_OBJ const Nullcomm COMM_NULL;

COURIER_CXX_OBJ Datatype DATATYPE_NULL(MPI_DATATYPE_NULL);
COURIER_CXX_OBJ Datatype CHAR(MPI_CHAR);
COURIER_CXX_OBJ Datatype SIGNED_CHAR(MPI_SIGNED_CHAR);
COURIER_CXX_OBJ Datatype UNSIGNED_CHAR(MPI_UNSIGNED_CHAR);
COURIER_CXX_OBJ Datatype BYTE(MPI_BYTE);
COURIER_CXX_OBJ Datatype WCHAR(MPI_WCHAR);
COURIER_CXX_OBJ Datatype SHORT(MPI_SHORT);
COURIER_CXX_OBJ Datatype UNSIGNED_SHORT(MPI_UNSIGNED_SHORT);
COURIER_CXX_OBJ Datatype INT(MPI_INT);
COURIER_CXX_OBJ Datatype UNSIGNED(MPI_UNSIGNED);
COURIER_CXX_OBJ Datatype LONG(MPI_LONG);
COURIER_CXX_OBJ Datatype UNSIGNED_LONG(MPI_UNSIGNED_LONG);
COURIER_CXX_OBJ Datatype LONG_LONG(MPI_LONG_LONG);
COURIER_CXX_OBJ Datatype LONG_LONG_INT(MPI_LONG_LONG_INT);
COURIER_CXX_OBJ Datatype UNSIGNED_LONG_LONG(MPI_UNSIGNED_LONG_LONG);
COURIER_CXX_OBJ Datatype FLOAT(MPI_FLOAT);
COURIER_CXX_OBJ Datatype DOUBLE(MPI_DOUBLE);
COURIER_CXX_OBJ Datatype LONG_DOUBLE(MPI_LONG_DOUBLE);
COURIER_CXX_OBJ Datatype PACKED(MPI_PACKED);
COURIER_CXX_OBJ Datatype FLOAT_INT(MPI_FLOAT_INT);
COURIER_CXX_OBJ Datatype DOUBLE_INT(MPI_DOUBLE_INT);
COURIER_CXX_OBJ Datatype LONG_INT(MPI_LONG_INT);
COURIER_CXX_OBJ Datatype TWOINT(MPI_2INT);
COURIER_CXX_OBJ Datatype SHORT_INT(MPI_SHORT_INT);
COURIER_CXX_OBJ Datatype LONG_DOUBLE_INT(MPI_LONG_DOUBLE_INT);
/* C++ types: bool and std::complex<float, double, long double> */
COURIER_CXX_OBJ Datatype BOOL(MPI_CXX_BOOL);
COURIER_CXX_OBJ Datatype COMPLEX(MPI_CXX_FLOAT_COMPLEX);
COURIER_CXX_OBJ Datatype DOUBLE_COMPLEX(MPI_CXX_DOUBLE_COMPLEX);
COURIER_CXX_OBJ Datatype LONG_DOUBLE_COMPLEX(MPI_CXX_LONG_DOUBLE_COMPLEX);
/* MPI-2.2's C types */
COURIER_CXX_OBJ Datatype INT8_T(MPI_INT8_T);
COURIER_CXX_OBJ Datatype INT16_T(MPI_INT16_T);
COURIER_CXX_OBJ Datatype INT32_T(MPI_INT32_T);
COURIER_CXX_OBJ Datatype INT64_T(MPI_INT64_T);
COURIER_CXX_OBJ Datatype UINT8_T(MPI_UINT8_T);
COURIER_CXX_OBJ Datatype UINT16_T(MPI_UINT16_T);
COURIER_CXX_OBJ Datatype UINT32_T(MPI_UINT32_T);
COURIER_CXX_OBJ Datatype UINT64_T(MPI_UINT64_T);
COURIER_CXX_OBJ Datatype AINT(MPI_AINT);
COURIER_CXX_OBJ Datatype OFFSET(MPI_OFFSET);
COURIER_CXX_OBJ Datatype C_BOOL(MPI_C_BOOL);
COURIER_CXX_OBJ Datatype C_COMPLEX(MPI_C_COMPLEX);
COURIER_CXX_OBJ Datatype C_FLOAT_COMPLEX(MPI_C_FLOAT_COMPLEX);
COURIER_CXX_OBJ Datatype C_DOUBLE_COMPLEX(MPI_C_DOUBLE_COMPLEX);
COURIER_CXX_OBJ Datatype C_LONG_DOUBLE_COMPLEX(MPI_C_LONG_DOUBLE_COMPLEX);
/* Fortran types */
COURIER_CXX_OBJ Datatype CHARACTER(MPI_CHARACTER);
COURIER_CXX_OBJ Datatype LOGICAL(MPI_LOGICAL);
COURIER_CXX_OBJ Datatype INTEGER(MPI_INTEGER);
COURIER_CXX_OBJ Datatype REAL(MPI_REAL);
COURIER_CXX_OBJ Datatype DOUBLE_PRECISION(MPI_DOUBLE_PRECISION);
COURIER_CXX_OBJ Datatype F_COMPLEX(MPI_COMPLEX);
COURIER_CXX_OBJ Datatype F_DOUBLE_COMPLEX(MPI_DOUBLE_COMPLEX);
COURIER_CXX_OBJ Datatype TWOREAL(MPI_2REAL);
COURIER_CXX_OBJ Datatype TWODOUBLE_PRECISION(MPI_2DOUBLE_PRECISION);
COURIER_CXX_OBJ Datatype TWOINTEGER(MPI_2INTEGER);
COURIER_CXX_OBJ Datatype INTEGER1(MPI_INTEGER1);
COURIER_CXX_OBJ Datatype INTEGER2(MPI_INTEGER2);
COURIER_CXX_OBJ Datatype INTEGER4(MPI_INTEGER4);
COURIER_CXX_OBJ Datatype INTEGER8(MPI_INTEGER8);
COURIER_CXX_OBJ Datatype INTEGER16(MPI_INTEGER16);
COURIER_CXX_OBJ Datatype REAL4(MPI_REAL4);
COURIER_CXX_OBJ Datatype REAL8(MPI_REAL8);
COURIER_CXX_OBJ Datatype REAL16(MPI_REAL16);
COURIER_CXX_OBJ Datatype COMPLEX8(MPI_COMPLEX8);
COURIER_CXX_OBJ Datatype COMPLEX16(MPI_COMPLEX16);
COURIER_CXX_OBJ Datatype COMPLEX32(MPI_COMPLEX32);
/* MPI-2.2's bound markers, which MPI-3.0 removed: the handles mpi.h gives
 * MPI_LB and MPI_UB under OMPI_ENABLE_MPI1_COMPAT (only MPI_Type_struct
 * takes them). */
#ifdef MPI_LB
COURIER_CXX_OBJ Datatype LB(MPI_LB);
COURIER_CXX_OBJ Datatype UB(MPI_UB);
#else
COURIER_CXX_OBJ Datatype LB((MPI_Datatype)0x4ffffffd);
COURIER_CXX_OBJ Datatype UB((MPI_Datatype)0x4ffffffe);
#endif

COURIER_CXX_OBJ const Op OP_NULL(MPI_OP_NULL);
COURIER_CXX_OBJ const Op MAX(MPI_MAX);
COURIER_CXX_OBJ const Op MIN(MPI_MIN);
COURIER_CXX_OBJ const Op SUM(MPI_SUM);
COURIER_CXX_OBJ const Op PROD(MPI_PROD);
COURIER_CXX_OBJ const Op LAND(MPI_LAND);
COURIER_CXX_OBJ const Op BAND(MPI_BAND);
COURIER_CXX_OBJ const Op LOR(MPI_LOR);
COURIER_CXX_OBJ const Op BOR(MPI_BOR);
COURIER_CXX_OBJ const Op LXOR(MPI_LXOR);
COURIER_CXX_OBJ const Op BXOR(MPI_BXOR);
COURIER_CXX_OBJ const Op MAXLOC(MPI_MAXLOC);
COURIER_CXX_OBJ const Op MINLOC(MPI_MINLOC);
COURIER_CXX_OBJ const Op REPLACE(MPI_REPLACE);
COURIER_CXX_OBJ const Op NO_OP(MPI_NO_OP);

COURIER_CXX_OBJ const Group GROUP_NULL(MPI_GROUP_NULL);
COURIER_CXX_OBJ const Group GROUP_EMPTY(MPI_GROUP_EMPTY);
COURIER_CXX_OBJ const Request REQUEST_NULL(MPI_REQUEST_NULL);
COURIER_CXX_OBJ const Info INFO_NULL(MPI_INFO_NULL);
COURIER_CXX_OBJ const Info INFO_ENV(MPI_INFO_ENV);
COURIER_CXX_OBJ const Win WIN_NULL(MPI_WIN_NULL);
COURIER_CXX_OBJ const File FILE_NULL(MPI_FILE_NULL);
COURIER_CXX_OBJ const Errhandler ERRHANDLER_NULL(MPI_ERRHANDLER_NULL);
COURIER_CXX_OBJ const Errhandler ERRORS_ARE_FATAL(MPI_ERRORS_ARE_FATAL);
COURIER_CXX_OBJ const Errhandler ERRORS_RETURN(MPI_ERRORS_RETURN);
COURIER_CXX_OBJ const Errhandler ERRORS_ABORT(MPI_ERRORS_ABORT);
COURIER_CXX_OBJ const Errhandler ERRORS_THROW_EXCEPTIONS(detail::throw_sentinel);

COURIER_CXX_OBJ void *const BOTTOM = MPI_BOTTOM;
COURIER_CXX_OBJ void *const IN_PLACE = MPI_IN_PLACE;
COURIER_CXX_OBJ const char **const ARGV_NULL = 0;
COURIER_CXX_OBJ const char ***const ARGVS_NULL = 0;

/* ---- integer constants ------------------------------------------------------- */
const int SUCCESS = MPI_SUCCESS;
const int ERR_BUFFER = MPI_ERR_BUFFER;
const int ERR_COUNT = MPI_ERR_COUNT;
const int ERR_TYPE = MPI_ERR_TYPE;
const int ERR_TAG = MPI_ERR_TAG;
const int ERR_COMM = MPI_ERR_COMM;
const int ERR_RANK = MPI_ERR_RANK;
const int ERR_REQUEST = MPI_ERR_REQUEST;
const int ERR_ROOT = MPI_ERR_ROOT;
const int ERR_GROUP = MPI_ERR_GROUP;
const int ERR_OP = MPI_ERR_OP;
const int ERR_TOPOLOGY = MPI_ERR_TOPOLOGY;
const int ERR_DIMS = MPI_ERR_DIMS;
const int ERR_ARG = MPI_ERR_ARG;
const int ERR_UNKNOWN = MPI_ERR_UNKNOWN;
const int ERR_TRUNCATE = MPI_ERR_TRUNCATE;
const int ERR_OTHER = MPI_ERR_OTHER;
const int ERR_INTERN = MPI_ERR_INTERN;
const int ERR_IN_STATUS = MPI_ERR_IN_STATUS;
const int ERR_PENDING = MPI_ERR_PENDING;
const int ERR_KEYVAL = MPI_ERR_KEYVAL;
const int ERR_NO_MEM = MPI_ERR_NO_MEM;
const int ERR_BASE = MPI_ERR_BASE;
const int ERR_INFO = MPI_ERR_INFO;
const int ERR_INFO_KEY = MPI_ERR_INFO_KEY;
const int ERR_INFO_VALUE = MPI_ERR_INFO_VALUE;
const int ERR_INFO_NOKEY = MPI_ERR_INFO_NOKEY;
const int ERR_NOT_SAME = MPI_ERR_NOT_SAME;
const int ERR_UNSUPPORTED_OPERATION = MPI_ERR_UNSUPPORTED_OPERATION;
const int ERR_WIN = MPI_ERR_WIN;
const int ERR_SIZE = MPI_ERR_SIZE;
const int ERR_DISP = MPI_ERR_DISP;
const int ERR_LOCKTYPE = MPI_ERR_LOCKTYPE;
const int ERR_ASSERT = MPI_ERR_ASSERT;
const int ERR_RMA_CONFLICT = MPI_ERR_RMA_CONFLICT;
const int ERR_RMA_SYNC = MPI_ERR_RMA_SYNC;
const int ERR_FILE = MPI_ERR_FILE;
const int ERR_AMODE = MPI_ERR_AMODE;
const int ERR_UNSUPPORTED_DATAREP = MPI_ERR_UNSUPPORTED_DATAREP;
const int ERR_NO_SUCH_FILE = MPI_ERR_NO_SUCH_FILE;
const int ERR_FILE_EXISTS = MPI_ERR_FILE_EXISTS;
const int ERR_BAD_FILE = MPI_ERR_BAD_FILE;
const int ERR_ACCESS = MPI_ERR_ACCESS;
const int ERR_NO_SPACE = MPI_ERR_NO_SPACE;
const int ERR_QUOTA = MPI_ERR_QUOTA;
const int ERR_READ_ONLY = MPI_ERR_READ_ONLY;
const int ERR_FILE_IN_USE = MPI_ERR_FILE_IN_USE;
const int ERR_DUP_DATAREP = MPI_ERR_DUP_DATAREP;
const int ERR_CONVERSION = MPI_ERR_CONVERSION;
const int ERR_IO = MPI_ERR_IO;
const int ERR_PORT = MPI_ERR_PORT;
const int ERR_NAME = MPI_ERR_NAME;
const int ERR_SERVICE = MPI_ERR_SERVICE;
const int ERR_SPAWN = MPI_ERR_SPAWN;
const int ERR_LASTCODE = MPI_ERR_LASTCODE;

const int ANY_SOURCE = MPI_ANY_SOURCE;
const int ANY_TAG = MPI_ANY_TAG;
const int PROC_NULL = MPI_PROC_NULL;
const int ROOT = MPI_ROOT;
const int UNDEFINED = MPI_UNDEFINED;
const int KEYVAL_INVALID = MPI_KEYVAL_INVALID;
const int BSEND_OVERHEAD = MPI_BSEND_OVERHEAD;
const int MAX_PROCESSOR_NAME = MPI_MAX_PROCESSOR_NAME;
const int MAX_ERROR_STRING = MPI_MAX_ERROR_STRING;
const int MAX_OBJECT_NAME = MPI_MAX_OBJECT_NAME;
const int MAX_INFO_KEY = MPI_MAX_INFO_KEY;
const int MAX_INFO_VAL = MPI_MAX_INFO_VAL;
const int MAX_PORT_NAME = MPI_MAX_PORT_NAME;
const int MAX_DATAREP_STRING = MPI_MAX_DATAREP_STRING;
const int MAX_LIBRARY_VERSION_STRING = MPI_MAX_LIBRARY_VERSION_STRING;

const int TAG_UB = MPI_TAG_UB;
const int HOST = MPI_HOST;
const int IO = MPI_IO;
const int WTIME_IS_GLOBAL = MPI_WTIME_IS_GLOBAL;
const int UNIVERSE_SIZE = MPI_UNIVERSE_SIZE;
const int APPNUM = MPI_APPNUM;
const int LASTUSEDCODE = MPI_LASTUSEDCODE;
const int WIN_BASE = MPI_WIN_BASE;
const int WIN_SIZE = MPI_WIN_SIZE;
const int WIN_DISP_UNIT = MPI_WIN_DISP_UNIT;

const int IDENT = MPI_IDENT;
const int CONGRUENT = MPI_CONGRUENT;
const int SIMILAR = MPI_SIMILAR;
const int UNEQUAL = MPI_UNEQUAL;

const int THREAD_SINGLE = MPI_THREAD_SINGLE;
const int THREAD_FUNNELED = MPI_THREAD_FUNNELED;
const int THREAD_SERIALIZED = MPI_THREAD_SERIALIZED;
const int THREAD_MULTIPLE = MPI_THREAD_MULTIPLE;

const int GRAPH = MPI_GRAPH;
const int CART = MPI_CART;
const int DIST_GRAPH = MPI_DIST_GRAPH;

const int LOCK_EXCLUSIVE = MPI_LOCK_EXCLUSIVE;
const int LOCK_SHARED = MPI_LOCK_SHARED;
const int MODE_NOCHECK = MPI_MODE_NOCHECK;
const int MODE_NOSTORE = MPI_MODE_NOSTORE;
const int MODE_NOPUT = MPI_MODE_NOPUT;
const int MODE_NOPRECEDE = MPI_MODE_NOPRECEDE;
const int MODE_NOSUCCEED = MPI_MODE_NOSUCCEED;

const int MODE_CREATE = MPI_MODE_CREATE;
const int MODE_RDONLY = MPI_MODE_RDONLY;
const int MODE_WRONLY = MPI_MODE_WRONLY;
const int MODE_RDWR = MPI_MODE_RDWR;
const int MODE_DELETE_ON_CLOSE = MPI_MODE_DELETE_ON_CLOSE;
const int MODE_UNIQUE_OPEN = MPI_MODE_UNIQUE_OPEN;
const int MODE_EXCL = MPI_MODE_EXCL;
const int MODE_APPEND = MPI_MODE_APPEND;
const int MODE_SEQUENTIAL = MPI_MODE_SEQUENTIAL;
#ifndef MPICH_IGNORE_CXX_SEEK /* MPICH's switch: stdio's macros stay, no MPI::SEEK_* */
const int SEEK_SET = MPI_SEEK_SET;
const int SEEK_CUR = MPI_SEEK_CUR;
const int SEEK_END = MPI_SEEK_END;
#endif
const Offset DISPLACEMENT_CURRENT = MPI_DISPLACEMENT_CURRENT;

const int COMBINER_NAMED = MPI_COMBINER_NAMED;
const int COMBINER_DUP = MPI_COMBINER_DUP;
const int COMBINER_CONTIGUOUS = MPI_COMBINER_CONTIGUOUS;
const int COMBINER_VECTOR = MPI_COMBINER_VECTOR;
const int COMBINER_HVECTOR = MPI_COMBINER_HVECTOR;
const int COMBINER_HVECTOR_INTEGER = 5; /* MPI-2.2's Fortran-only combiners */
const int COMBINER_HINDEXED_INTEGER = 8;
const int COMBINER_STRUCT_INTEGER = 11;
const int COMBINER_INDEXED = MPI_COMBINER_INDEXED;
const int COMBINER_HINDEXED = MPI_COMBINER_HINDEXED;
const int COMBINER_INDEXED_BLOCK = MPI_COMBINER_INDEXED_BLOCK;
const int COMBINER_HINDEXED_BLOCK = MPI_COMBINER_HINDEXED_BLOCK;
const int COMBINER_STRUCT = MPI_COMBINER_STRUCT;
const int COMBINER_SUBARRAY = MPI_COMBINER_SUBARRAY;
const int COMBINER_DARRAY = MPI_COMBINER_DARRAY;
const int COMBINER_F90_REAL = MPI_COMBINER_F90_REAL;
const int COMBINER_F90_COMPLEX = MPI_COMBINER_F90_COMPLEX;
const int COMBINER_F90_INTEGER = MPI_COMBINER_F90_INTEGER;
const int COMBINER_RESIZED = MPI_COMBINER_RESIZED;
const int ORDER_C = MPI_ORDER_C;
const int ORDER_FORTRAN = MPI_ORDER_FORTRAN;
const int DISTRIBUTE_BLOCK = MPI_DISTRIBUTE_BLOCK;
const int DISTRIBUTE_CYCLIC = MPI_DISTRIBUTE_CYCLIC;
const int DISTRIBUTE_NONE = MPI_DISTRIBUTE_NONE;
const int DISTRIBUTE_DFLT_DARG = MPI_DISTRIBUTE_DFLT_DARG;
const int TYPECLASS_INTEGER = MPI_TYPECLASS_INTEGER;
const int TYPECLASS_REAL = MPI_TYPECLASS_REAL;
const int TYPECLASS_COMPLEX = MPI_TYPECLASS_COMPLEX;
const int COMM_TYPE_SHARED = MPI_COMM_TYPE_SHARED;

} // namespace MPI

#undef COURIER_CXX_OBJ
#undef COURIER_CXX_TRY
#undef COURIER_CXX_CATCH
#endif /* C++11 */
#endif
