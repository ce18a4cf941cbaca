/*
 * owner.c
 *		The calling role of the functions game backends call, and the switch
 *		to the extension's owner for their table access.
 */
#include "matchmaker.h"

#include "catalog/namespace.h"
#include "catalog/pg_namespace.h"
#include "miscadmin.h"
#include "access/htup_details.h"
#include "utils/acl.h"
#include "utils/syscache.h"

/*
 * enqueue, cancel, accept, ticket_status, backfill and cancel_backfill run with the caller's
 * privileges (SECURITY INVOKER: EXECUTE is checked against the caller),
 * note the calling role -- the current user, so a caller's own SECURITY
 * DEFINER function calls as its owner -- and then act as the owner of
 * schema matchmaker (the extension's owner, as the install script
 * checks), the only role that may write the tables.  A transaction or
 * subtransaction abort restores the user, as for SECURITY DEFINER.
 */
void
mm_act_as_owner(MMCaller *caller)
{
	Oid			nsp = get_namespace_oid("matchmaker", false);
	HeapTuple	tup = SearchSysCache1(NAMESPACEOID, ObjectIdGetDatum(nsp));
	Oid			owner;

	if (!HeapTupleIsValid(tup))
		elog(ERROR, "cache lookup failed for schema %u", nsp);
	owner = ((Form_pg_namespace) GETSTRUCT(tup))->nspowner;
	ReleaseSysCache(tup);
	GetUserIdAndSecContext(&caller->role, &caller->sec_context);
	SetUserIdAndSecContext(owner, caller->sec_context | SECURITY_LOCAL_USERID_CHANGE);
}

void
mm_act_as_caller(const MMCaller *caller)
{
	SetUserIdAndSecContext(caller->role, caller->sec_context);
}

/*
 * May the calling role act on a ticket enqueued by the role with oid owner
 * (named owner_name when the table records the name, else NULL)?
 * Superusers act for any ticket.  Otherwise the caller must have the
 * privileges of that role, and with a recorded name the role must still
 * exist under that name: a ticket whose role was dropped (its oid maybe
 * taken since by another role), renamed, or that was restored into a
 * cluster where the oid is another role's, belongs to nobody.
 */
bool
mm_caller_owns(const MMCaller *caller, Oid owner, const char *owner_name)
{
	char	   *current_name;

	if (superuser_arg(caller->role))
		return true;
	if (!has_privs_of_role(caller->role, owner))
		return false;
	if (owner_name == NULL)
		return true;
	current_name = GetUserNameFromId(owner, true);
	return current_name != NULL && strcmp(current_name, owner_name) == 0;
}
