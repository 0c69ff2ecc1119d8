/* courier's header of the MPI standard ABI (MPI-5.0, "Application Binary
 * Interface"; ABI version 1.0): the handle types and constant values every
 * ABI-built MPI shares, so that a program compiled against this header (or
 * against the MPI Forum's reference header, mpi-forum/mpi-abi-stubs)
 * and linked with -lmpi_abi runs with courier's libmpi_abi.so, or with any
 * other MPI's. courier's own mpi.h (include/courier) is not this ABI: its
 * handles are ints, its constants its own; libmpi_abi.so translates at the
 * boundary (src/abi/, docs/mpi.md "The MPI-5 standard ABI").
 *
 * The functions are declared in mpi_abi_calls.h, generated at build time from
 * courier's mpi.h (tools/abi_gen.awk): every call libmpi_abi.so provides, and
 * no other, so that a call it lacks fails to compile or link rather than
 * reaching courier with handles it cannot read. */
#ifndef COURIER_MPI_ABI_H
#define COURIER_MPI_ABI_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define MPI_VERSION 5
#define MPI_SUBVERSION 0
#define MPI_ABI_VERSION 1
#define MPI_ABI_SUBVERSION 0
#define COURIER_MPI_ABI 1

typedef intptr_t MPI_Aint;
typedef int64_t MPI_Offset;
typedef MPI_Offset MPI_Count;
typedef int MPI_Fint;

/* Three public fields, then five ints of the implementation's (32 bytes). */
typedef struct {
    int MPI_SOURCE;
    int MPI_TAG;
    int MPI_ERROR;
    int mpi_abi_internal[5];
} MPI_Status;
typedef struct {
    MPI_Fint MPI_SOURCE;
    MPI_Fint MPI_TAG;
    MPI_Fint MPI_ERROR;
    MPI_Fint mpi_abi_internal[5];
} MPI_F08_status;

/* ---- handles: an incomplete struct per kind; the predefined ones are small
 * numbers (below 0x400), distinct across kinds ---- */
typedef struct MPI_ABI_Op *MPI_Op;
typedef struct MPI_ABI_Comm *MPI_Comm;
typedef struct MPI_ABI_Group *MPI_Group;
typedef struct MPI_ABI_Win *MPI_Win;
typedef struct MPI_ABI_File *MPI_File;
typedef struct MPI_ABI_Session *MPI_Session;
typedef struct MPI_ABI_Message *MPI_Message;
typedef struct MPI_ABI_Info *MPI_Info;
typedef struct MPI_ABI_Errhandler *MPI_Errhandler;
typedef struct MPI_ABI_Request *MPI_Request;
typedef struct MPI_ABI_Datatype *MPI_Datatype;
#define MPI_OP_NULL ((MPI_Op)0x020)
#define MPI_SUM ((MPI_Op)0x021)
#define MPI_MIN ((MPI_Op)0x022)
#define MPI_MAX ((MPI_Op)0x023)
#define MPI_PROD ((MPI_Op)0x024)
#define MPI_BAND ((MPI_Op)0x028)
#define MPI_BOR ((MPI_Op)0x029)
#define MPI_BXOR ((MPI_Op)0x02a)
#define MPI_LAND ((MPI_Op)0x030)
#define MPI_LOR ((MPI_Op)0x031)
#define MPI_LXOR ((MPI_Op)0x032)
#define MPI_MINLOC ((MPI_Op)0x038)
#define MPI_MAXLOC ((MPI_Op)0x039)
#define MPI_REPLACE ((MPI_Op)0x03c)
#define MPI_NO_OP ((MPI_Op)0x03d)
#define MPI_COMM_NULL ((MPI_Comm)0x100)
#define MPI_COMM_WORLD ((MPI_Comm)0x101)
#define MPI_COMM_SELF ((MPI_Comm)0x102)
#define MPI_GROUP_NULL ((MPI_Group)0x108)
#define MPI_GROUP_EMPTY ((MPI_Group)0x109)
#define MPI_WIN_NULL ((MPI_Win)0x110)
#define MPI_FILE_NULL ((MPI_File)0x118)
#define MPI_SESSION_NULL ((MPI_Session)0x120)
#define MPI_MESSAGE_NULL ((MPI_Message)0x128)
#define MPI_MESSAGE_NO_PROC ((MPI_Message)0x129)
#define MPI_INFO_NULL ((MPI_Info)0x130)
#define MPI_INFO_ENV ((MPI_Info)0x131)
#define MPI_ERRHANDLER_NULL ((MPI_Errhandler)0x140)
#define MPI_ERRORS_ARE_FATAL ((MPI_Errhandler)0x141)
#define MPI_ERRORS_ABORT ((MPI_Errhandler)0x142)
#define MPI_ERRORS_RETURN ((MPI_Errhandler)0x143)
#define MPI_REQUEST_NULL ((MPI_Request)0x180)
#define MPI_DATATYPE_NULL ((MPI_Datatype)0x200)
#define MPI_AINT ((MPI_Datatype)0x201)
#define MPI_COUNT ((MPI_Datatype)0x202)
#define MPI_OFFSET ((MPI_Datatype)0x203)
#define MPI_PACKED ((MPI_Datatype)0x207)
#define MPI_SHORT ((MPI_Datatype)0x208)
#define MPI_INT ((MPI_Datatype)0x209)
#define MPI_LONG ((MPI_Datatype)0x20a)
#define MPI_LONG_LONG ((MPI_Datatype)0x20b)
#define MPI_UNSIGNED_SHORT ((MPI_Datatype)0x20c)
#define MPI_UNSIGNED ((MPI_Datatype)0x20d)
#define MPI_UNSIGNED_LONG ((MPI_Datatype)0x20e)
#define MPI_UNSIGNED_LONG_LONG ((MPI_Datatype)0x20f)
#define MPI_FLOAT ((MPI_Datatype)0x210)
#define MPI_C_FLOAT_COMPLEX ((MPI_Datatype)0x212)
#define MPI_CXX_FLOAT_COMPLEX ((MPI_Datatype)0x213)
#define MPI_DOUBLE ((MPI_Datatype)0x214)
#define MPI_C_DOUBLE_COMPLEX ((MPI_Datatype)0x216)
#define MPI_CXX_DOUBLE_COMPLEX ((MPI_Datatype)0x217)
#define MPI_LOGICAL ((MPI_Datatype)0x218)
#define MPI_INTEGER ((MPI_Datatype)0x219)
#define MPI_REAL ((MPI_Datatype)0x21a)
#define MPI_COMPLEX ((MPI_Datatype)0x21b)
#define MPI_DOUBLE_PRECISION ((MPI_Datatype)0x21c)
#define MPI_DOUBLE_COMPLEX ((MPI_Datatype)0x21d)
#define MPI_CHARACTER ((MPI_Datatype)0x21e)
#define MPI_LONG_DOUBLE ((MPI_Datatype)0x220)
#define MPI_C_LONG_DOUBLE_COMPLEX ((MPI_Datatype)0x224)
#define MPI_CXX_LONG_DOUBLE_COMPLEX ((MPI_Datatype)0x225)
#define MPI_FLOAT_INT ((MPI_Datatype)0x228)
#define MPI_DOUBLE_INT ((MPI_Datatype)0x229)
#define MPI_LONG_INT ((MPI_Datatype)0x22a)
#define MPI_2INT ((MPI_Datatype)0x22b)
#define MPI_SHORT_INT ((MPI_Datatype)0x22c)
#define MPI_LONG_DOUBLE_INT ((MPI_Datatype)0x22d)
#define MPI_2REAL ((MPI_Datatype)0x230)
#define MPI_2DOUBLE_PRECISION ((MPI_Datatype)0x231)
#define MPI_2INTEGER ((MPI_Datatype)0x232)
#define MPI_C_BOOL ((MPI_Datatype)0x238)
#define MPI_CXX_BOOL ((MPI_Datatype)0x239)
#define MPI_WCHAR ((MPI_Datatype)0x23c)
#define MPI_INT8_T ((MPI_Datatype)0x240)
#define MPI_UINT8_T ((MPI_Datatype)0x241)
#define MPI_CHAR ((MPI_Datatype)0x243)
#define MPI_SIGNED_CHAR ((MPI_Datatype)0x244)
#define MPI_UNSIGNED_CHAR ((MPI_Datatype)0x245)
#define MPI_BYTE ((MPI_Datatype)0x247)
#define MPI_INT16_T ((MPI_Datatype)0x248)
#define MPI_UINT16_T ((MPI_Datatype)0x249)
#define MPI_INT32_T ((MPI_Datatype)0x250)
#define MPI_UINT32_T ((MPI_Datatype)0x251)
#define MPI_INT64_T ((MPI_Datatype)0x258)
#define MPI_UINT64_T ((MPI_Datatype)0x259)
#define MPI_LOGICAL1 ((MPI_Datatype)0x2c0)
#define MPI_INTEGER1 ((MPI_Datatype)0x2c1)
#define MPI_LOGICAL2 ((MPI_Datatype)0x2c8)
#define MPI_INTEGER2 ((MPI_Datatype)0x2c9)
#define MPI_REAL2 ((MPI_Datatype)0x2ca)
#define MPI_LOGICAL4 ((MPI_Datatype)0x2d0)
#define MPI_INTEGER4 ((MPI_Datatype)0x2d1)
#define MPI_REAL4 ((MPI_Datatype)0x2d2)
#define MPI_COMPLEX4 ((MPI_Datatype)0x2d3)
#define MPI_LOGICAL8 ((MPI_Datatype)0x2d8)
#define MPI_INTEGER8 ((MPI_Datatype)0x2d9)
#define MPI_REAL8 ((MPI_Datatype)0x2da)
#define MPI_COMPLEX8 ((MPI_Datatype)0x2db)
#define MPI_LOGICAL16 ((MPI_Datatype)0x2e0)
#define MPI_INTEGER16 ((MPI_Datatype)0x2e1)
#define MPI_REAL16 ((MPI_Datatype)0x2e2)
#define MPI_COMPLEX16 ((MPI_Datatype)0x2e3)
#define MPI_COMPLEX32 ((MPI_Datatype)0x2eb)
#define MPI_LONG_LONG_INT MPI_LONG_LONG
#define MPI_C_COMPLEX MPI_C_FLOAT_COMPLEX

/* ---- integer constants ---- */
#define MPI_F_STATUS_SIZE (8)
#define MPI_F_SOURCE (0)
#define MPI_F_TAG (1)
#define MPI_F_ERROR (2)
#define MPI_SUCCESS (0)
#define MPI_ERR_BUFFER (1)
#define MPI_ERR_COUNT (2)
#define MPI_ERR_TYPE (3)
#define MPI_ERR_TAG (4)
#define MPI_ERR_COMM (5)
#define MPI_ERR_RANK (6)
#define MPI_ERR_REQUEST (7)
#define MPI_ERR_ROOT (8)
#define MPI_ERR_GROUP (9)
#define MPI_ERR_OP (10)
#define MPI_ERR_TOPOLOGY (11)
#define MPI_ERR_DIMS (12)
#define MPI_ERR_ARG (13)
#define MPI_ERR_UNKNOWN (14)
#define MPI_ERR_TRUNCATE (15)
#define MPI_ERR_OTHER (16)
#define MPI_ERR_INTERN (17)
#define MPI_ERR_PENDING (18)
#define MPI_ERR_IN_STATUS (19)
#define MPI_ERR_ACCESS (20)
#define MPI_ERR_AMODE (21)
#define MPI_ERR_ASSERT (22)
#define MPI_ERR_BAD_FILE (23)
#define MPI_ERR_BASE (24)
#define MPI_ERR_CONVERSION (25)
#define MPI_ERR_DISP (26)
#define MPI_ERR_DUP_DATAREP (27)
#define MPI_ERR_FILE_EXISTS (28)
#define MPI_ERR_FILE_IN_USE (29)
#define MPI_ERR_FILE (30)
#define MPI_ERR_INFO_KEY (31)
#define MPI_ERR_INFO_NOKEY (32)
#define MPI_ERR_INFO_VALUE (33)
#define MPI_ERR_INFO (34)
#define MPI_ERR_IO (35)
#define MPI_ERR_KEYVAL (36)
#define MPI_ERR_LOCKTYPE (37)
#define MPI_ERR_NAME (38)
#define MPI_ERR_NO_MEM (39)
#define MPI_ERR_NOT_SAME (40)
#define MPI_ERR_NO_SPACE (41)
#define MPI_ERR_NO_SUCH_FILE (42)
#define MPI_ERR_PORT (43)
#define MPI_ERR_QUOTA (44)
#define MPI_ERR_READ_ONLY (45)
#define MPI_ERR_RMA_ATTACH (46)
#define MPI_ERR_RMA_CONFLICT (47)
#define MPI_ERR_RMA_RANGE (48)
#define MPI_ERR_RMA_SHARED (49)
#define MPI_ERR_RMA_SYNC (50)
#define MPI_ERR_SERVICE (51)
#define MPI_ERR_SIZE (52)
#define MPI_ERR_SPAWN (53)
#define MPI_ERR_UNSUPPORTED_DATAREP (54)
#define MPI_ERR_UNSUPPORTED_OPERATION (55)
#define MPI_ERR_WIN (56)
#define MPI_ERR_RMA_FLAVOR (57)
#define MPI_ERR_PROC_ABORTED (58)
#define MPI_ERR_VALUE_TOO_LARGE (59)
#define MPI_ERR_SESSION (60)
#define MPI_ERR_ERRHANDLER (61)
#define MPI_ERR_ABI (62)
#define MPI_ERR_LASTCODE (0x3fff)
#define MPI_MODE_APPEND (1)
#define MPI_MODE_CREATE (2)
#define MPI_MODE_DELETE_ON_CLOSE (4)
#define MPI_MODE_EXCL (8)
#define MPI_MODE_RDONLY (16)
#define MPI_MODE_RDWR (32)
#define MPI_MODE_SEQUENTIAL (64)
#define MPI_MODE_UNIQUE_OPEN (128)
#define MPI_MODE_WRONLY (256)
#define MPI_MODE_NOCHECK (1024)
#define MPI_MODE_NOPRECEDE (2048)
#define MPI_MODE_NOPUT (4096)
#define MPI_MODE_NOSTORE (8192)
#define MPI_MODE_NOSUCCEED (16384)
#define MPI_ANY_SOURCE (-1)
#define MPI_ANY_TAG (-2)
#define MPI_PROC_NULL (-3)
#define MPI_ROOT (-4)
#define MPI_UNDEFINED (-32766)
#define MPI_THREAD_SINGLE (0)
#define MPI_THREAD_FUNNELED (1024)
#define MPI_THREAD_SERIALIZED (2048)
#define MPI_THREAD_MULTIPLE (4096)
#define MPI_ORDER_C (0xC)
#define MPI_ORDER_FORTRAN (0xF)
#define MPI_DISTRIBUTE_NONE (16)
#define MPI_DISTRIBUTE_BLOCK (17)
#define MPI_DISTRIBUTE_CYCLIC (18)
#define MPI_DISTRIBUTE_DFLT_DARG (19)
#define MPI_COMBINER_NAMED (101)
#define MPI_COMBINER_DUP (102)
#define MPI_COMBINER_CONTIGUOUS (103)
#define MPI_COMBINER_VECTOR (104)
#define MPI_COMBINER_HVECTOR (105)
#define MPI_COMBINER_INDEXED (106)
#define MPI_COMBINER_HINDEXED (107)
#define MPI_COMBINER_INDEXED_BLOCK (108)
#define MPI_COMBINER_HINDEXED_BLOCK (109)
#define MPI_COMBINER_STRUCT (110)
#define MPI_COMBINER_SUBARRAY (111)
#define MPI_COMBINER_DARRAY (112)
#define MPI_COMBINER_F90_REAL (113)
#define MPI_COMBINER_F90_COMPLEX (114)
#define MPI_COMBINER_F90_INTEGER (115)
#define MPI_COMBINER_RESIZED (116)
#define MPI_COMBINER_VALUE_INDEX (117)
#define MPIX_TYPECLASS_LOGICAL (191)
#define MPI_TYPECLASS_INTEGER (192)
#define MPI_TYPECLASS_REAL (193)
#define MPI_TYPECLASS_COMPLEX (194)
#define MPI_IDENT (201)
#define MPI_CONGRUENT (202)
#define MPI_SIMILAR (203)
#define MPI_UNEQUAL (204)
#define MPI_CART (211)
#define MPI_GRAPH (212)
#define MPI_DIST_GRAPH (213)
#define MPI_COMM_TYPE_SHARED (221)
#define MPI_COMM_TYPE_HW_UNGUIDED (222)
#define MPI_COMM_TYPE_HW_GUIDED (223)
#define MPI_COMM_TYPE_RESOURCE_GUIDED (224)
#define MPI_LOCK_EXCLUSIVE (301)
#define MPI_LOCK_SHARED (302)
#define MPI_WIN_FLAVOR_CREATE (311)
#define MPI_WIN_FLAVOR_ALLOCATE (312)
#define MPI_WIN_FLAVOR_DYNAMIC (313)
#define MPI_WIN_FLAVOR_SHARED (314)
#define MPI_WIN_UNIFIED (321)
#define MPI_WIN_SEPARATE (322)
#define MPI_SEEK_CUR (401)
#define MPI_SEEK_END (402)
#define MPI_SEEK_SET (403)
#define MPI_KEYVAL_INVALID (0)
#define MPI_TAG_UB (501)
#define MPI_IO (502)
#define MPI_HOST (503)
#define MPI_WTIME_IS_GLOBAL (504)
#define MPI_APPNUM (505)
#define MPI_LASTUSEDCODE (506)
#define MPI_UNIVERSE_SIZE (507)
#define MPI_WIN_BASE (601)
#define MPI_WIN_DISP_UNIT (602)
#define MPI_WIN_SIZE (603)
#define MPI_WIN_CREATE_FLAVOR (604)
#define MPI_WIN_MODEL (605)

/* ---- pointer and size constants ---- */
#define MPI_BOTTOM ((void *)0)
#define MPI_IN_PLACE ((void *)1)
#define MPI_BUFFER_AUTOMATIC ((void *)2)
#define MPI_ARGV_NULL ((char **)0)
#define MPI_ARGVS_NULL ((char ***)0)
#define MPI_ERRCODES_IGNORE ((int *)0)
#define MPI_STATUS_IGNORE ((MPI_Status *)0)
#define MPI_STATUSES_IGNORE ((MPI_Status *)0)
#define MPI_UNWEIGHTED ((int *)10)
#define MPI_WEIGHTS_EMPTY ((int *)11)
#define MPI_DISPLACEMENT_CURRENT ((MPI_Offset)-1)
#define MPI_MAX_DATAREP_STRING 128
#define MPI_MAX_ERROR_STRING 512
#define MPI_MAX_INFO_KEY 256
#define MPI_MAX_INFO_VAL 1024
#define MPI_MAX_LIBRARY_VERSION_STRING 8192
#define MPI_MAX_OBJECT_NAME 128
#define MPI_MAX_PORT_NAME 1024
#define MPI_MAX_PROCESSOR_NAME 256
#define MPI_MAX_STRINGTAG_LEN 1024
#define MPI_MAX_PSET_NAME_LEN 1024
#define MPI_BSEND_OVERHEAD 512

/* ---- the program's functions courier calls ---- */
typedef void(MPI_User_function)(void *invec, void *inoutvec, int *len, MPI_Datatype *datatype);
typedef void(MPI_User_function_c)(void *invec, void *inoutvec, MPI_Count *len,
                                  MPI_Datatype *datatype);
typedef int(MPI_Grequest_query_function)(void *extra_state, MPI_Status *status);
typedef int(MPI_Grequest_free_function)(void *extra_state);
typedef int(MPI_Grequest_cancel_function)(void *extra_state, int complete);
typedef int(MPI_Copy_function)(MPI_Comm comm, int keyval, void *extra_state,
                               void *attribute_val_in, void *attribute_val_out, int *flag);
typedef int(MPI_Delete_function)(MPI_Comm comm, int keyval, void *attribute_val,
                                 void *extra_state);
typedef int(MPI_Comm_copy_attr_function)(MPI_Comm comm, int comm_keyval, void *extra_state,
                                         void *attribute_val_in, void *attribute_val_out,
                                         int *flag);
typedef int(MPI_Comm_delete_attr_function)(MPI_Comm comm, int comm_keyval, void *attribute_val,
                                           void *extra_state);
typedef int(MPI_Type_copy_attr_function)(MPI_Datatype datatype, int type_keyval,
                                         void *extra_state, void *attribute_val_in,
                                         void *attribute_val_out, int *flag);
typedef int(MPI_Type_delete_attr_function)(MPI_Datatype datatype, int type_keyval,
                                           void *attribute_val, void *extra_state);
typedef int(MPI_Win_copy_attr_function)(MPI_Win win, int win_keyval, void *extra_state,
                                        void *attribute_val_in, void *attribute_val_out,
                                        int *flag);
typedef int(MPI_Win_delete_attr_function)(MPI_Win win, int win_keyval, void *attribute_val,
                                          void *extra_state);
typedef int(MPI_Datarep_extent_function)(MPI_Datatype datatype, MPI_Aint *extent,
                                         void *extra_state);
typedef int(MPI_Datarep_conversion_function)(void *userbuf, MPI_Datatype datatype, int count,
                                             void *filebuf, MPI_Offset position,
                                             void *extra_state);
typedef int(MPI_Datarep_conversion_function_c)(void *userbuf, MPI_Datatype datatype,
                                               MPI_Count count, void *filebuf,
                                               MPI_Offset position, void *extra_state);
typedef void(MPI_Comm_errhandler_function)(MPI_Comm *comm, int *error_code, ...);
typedef void(MPI_File_errhandler_function)(MPI_File *file, int *error_code, ...);
typedef void(MPI_Win_errhandler_function)(MPI_Win *win, int *error_code, ...);
typedef void(MPI_Session_errhandler_function)(MPI_Session *session, int *error_code, ...);
typedef MPI_Comm_errhandler_function MPI_Comm_errhandler_fn;
typedef MPI_File_errhandler_function MPI_File_errhandler_fn;
typedef MPI_Win_errhandler_function MPI_Win_errhandler_fn;
typedef MPI_Session_errhandler_function MPI_Session_errhandler_fn;
#define MPI_NULL_COPY_FN ((MPI_Copy_function *)0)
#define MPI_DUP_FN ((MPI_Copy_function *)1)
#define MPI_NULL_DELETE_FN ((MPI_Delete_function *)0)
#define MPI_COMM_NULL_COPY_FN ((MPI_Comm_copy_attr_function *)0)
#define MPI_COMM_DUP_FN ((MPI_Comm_copy_attr_function *)1)
#define MPI_COMM_NULL_DELETE_FN ((MPI_Comm_delete_attr_function *)0)
#define MPI_TYPE_NULL_COPY_FN ((MPI_Type_copy_attr_function *)0)
#define MPI_TYPE_DUP_FN ((MPI_Type_copy_attr_function *)1)
#define MPI_TYPE_NULL_DELETE_FN ((MPI_Type_delete_attr_function *)0)
#define MPI_WIN_NULL_COPY_FN ((MPI_Win_copy_attr_function *)0)
#define MPI_WIN_DUP_FN ((MPI_Win_copy_attr_function *)1)
#define MPI_WIN_NULL_DELETE_FN ((MPI_Win_delete_attr_function *)0)
#define MPI_CONVERSION_FN_NULL ((MPI_Datarep_conversion_function *)0)
#define MPI_CONVERSION_FN_NULL_C ((MPI_Datarep_conversion_function_c *)0)

/* ---- the tools interface ---- */
typedef struct MPI_T_enum_t *MPI_T_enum;
typedef struct MPI_T_cvar_handle_t *MPI_T_cvar_handle;
typedef struct MPI_T_pvar_handle_t *MPI_T_pvar_handle;
typedef struct MPI_T_pvar_session_t *MPI_T_pvar_session;
typedef struct MPI_T_event_registration_t *MPI_T_event_registration;
typedef struct MPI_T_event_instance_t *MPI_T_event_instance;
#define MPI_T_ENUM_NULL ((MPI_T_enum)0)
#define MPI_T_CVAR_HANDLE_NULL ((MPI_T_cvar_handle)0)
#define MPI_T_PVAR_SESSION_NULL ((MPI_T_pvar_session)0)
#define MPI_T_PVAR_HANDLE_NULL ((MPI_T_pvar_handle)0)
#define MPI_T_PVAR_ALL_HANDLES ((MPI_T_pvar_handle)1)
typedef enum MPI_T_cb_safety {
    MPI_T_CB_REQUIRE_NONE = 0x00,
    MPI_T_CB_REQUIRE_MPI_RESTRICTED = 0x03,
    MPI_T_CB_REQUIRE_THREAD_SAFE = 0x0F,
    MPI_T_CB_REQUIRE_ASYNC_SIGNAL_SAFE = 0x3F
} MPI_T_cb_safety;
typedef enum MPI_T_source_order { MPI_T_SOURCE_ORDERED = 1, MPI_T_SOURCE_UNORDERED = 2 } MPI_T_source_order;
typedef void(MPI_T_event_cb_function)(MPI_T_event_instance event_instance,
                                      MPI_T_event_registration event_registration,
                                      MPI_T_cb_safety cb_safety, void *user_data);
typedef void(MPI_T_event_free_cb_function)(MPI_T_event_registration event_registration,
                                           MPI_T_cb_safety cb_safety, void *user_data);
typedef void(MPI_T_event_dropped_cb_function)(MPI_Count count,
                                              MPI_T_event_registration event_registration,
                                              int source_index, MPI_T_cb_safety cb_safety,
                                              void *user_data);
#define MPI_T_ERR_CANNOT_INIT (1001)
#define MPI_T_ERR_NOT_ACCESSIBLE (1002)
#define MPI_T_ERR_NOT_INITIALIZED (1003)
#define MPI_T_ERR_NOT_SUPPORTED (1004)
#define MPI_T_ERR_MEMORY (1005)
#define MPI_T_ERR_INVALID (1006)
#define MPI_T_ERR_INVALID_INDEX (1007)
#define MPI_T_ERR_INVALID_ITEM (1008)
#define MPI_T_ERR_INVALID_SESSION (1009)
#define MPI_T_ERR_INVALID_HANDLE (1010)
#define MPI_T_ERR_INVALID_NAME (1011)
#define MPI_T_ERR_OUT_OF_HANDLES (1012)
#define MPI_T_ERR_OUT_OF_SESSIONS (1013)
#define MPI_T_ERR_CVAR_SET_NOT_NOW (1014)
#define MPI_T_ERR_CVAR_SET_NEVER (1015)
#define MPI_T_ERR_PVAR_NO_WRITE (1016)
#define MPI_T_ERR_PVAR_NO_STARTSTOP (1017)
#define MPI_T_ERR_PVAR_NO_ATOMIC (1018)
#define MPI_T_VERBOSITY_USER_BASIC (0x09)
#define MPI_T_VERBOSITY_USER_DETAIL (0x0a)
#define MPI_T_VERBOSITY_USER_ALL (0x0c)
#define MPI_T_VERBOSITY_TUNER_BASIC (0x11)
#define MPI_T_VERBOSITY_TUNER_DETAIL (0x12)
#define MPI_T_VERBOSITY_TUNER_ALL (0x14)
#define MPI_T_VERBOSITY_MPIDEV_BASIC (0x21)
#define MPI_T_VERBOSITY_MPIDEV_DETAIL (0x22)
#define MPI_T_VERBOSITY_MPIDEV_ALL (0x24)
#define MPI_T_BIND_NO_OBJECT (1)
#define MPI_T_BIND_MPI_COMM (2)
#define MPI_T_BIND_MPI_DATATYPE (3)
#define MPI_T_BIND_MPI_ERRHANDLER (4)
#define MPI_T_BIND_MPI_FILE (5)
#define MPI_T_BIND_MPI_GROUP (6)
#define MPI_T_BIND_MPI_OP (7)
#define MPI_T_BIND_MPI_REQUEST (8)
#define MPI_T_BIND_MPI_WIN (9)
#define MPI_T_BIND_MPI_MESSAGE (10)
#define MPI_T_BIND_MPI_INFO (11)
#define MPI_T_BIND_MPI_SESSION (12)
#define MPI_T_SCOPE_CONSTANT (1)
#define MPI_T_SCOPE_READONLY (2)
#define MPI_T_SCOPE_LOCAL (3)
#define MPI_T_SCOPE_GROUP (4)
#define MPI_T_SCOPE_GROUP_EQ (5)
#define MPI_T_SCOPE_ALL (6)
#define MPI_T_SCOPE_ALL_EQ (7)
#define MPI_T_PVAR_CLASS_STATE (1)
#define MPI_T_PVAR_CLASS_LEVEL (2)
#define MPI_T_PVAR_CLASS_SIZE (3)
#define MPI_T_PVAR_CLASS_PERCENTAGE (4)
#define MPI_T_PVAR_CLASS_HIGHWATERMARK (5)
#define MPI_T_PVAR_CLASS_LOWWATERMARK (6)
#define MPI_T_PVAR_CLASS_COUNTER (7)
#define MPI_T_PVAR_CLASS_AGGREGATE (8)
#define MPI_T_PVAR_CLASS_TIMER (9)
#define MPI_T_PVAR_CLASS_GENERIC (10)

/* ---- the Fortran status sentinels, for MPI_Status_c2f and the like (as the
 * reference header: variables of the library) ---- */
extern MPI_Fint *const MPI_F_STATUS_IGNORE;
extern MPI_Fint *const MPI_F_STATUSES_IGNORE;
extern MPI_F08_status *const MPI_F08_STATUS_IGNORE;
extern MPI_F08_status *const MPI_F08_STATUSES_IGNORE;

/* ---- the calls (generated: build/include/abi/mpi_abi_calls.h) ---- */
#include "mpi_abi_calls.h"

#ifdef __cplusplus
}
#endif
#endif
