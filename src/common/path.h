/* ZooKeeper path rules (PathUtils.validatePath), shared by the server and
 * the client library so both refuse the same paths. */
#ifndef TB_PATH_H
#define TB_PATH_H

#include "common/common.h"

/* 0 when `path` is a valid absolute znode path, else TB_EBADARGUMENTS. */
int tb_path_validate(struct tb_str path);

/* The parent of a valid path other than "/" ("/a" -> "/"). */
struct tb_str tb_path_parent(struct tb_str path);
/* The last component of a valid path other than "/". */
struct tb_str tb_path_basename(struct tb_str path);

#endif
