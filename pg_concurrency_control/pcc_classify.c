/*-------------------------------------------------------------------------
 *
 * pcc_classify.c
 *	  Which gate a statement belongs to.
 *
 * A statement is big when the hint comment "+bigsql" (a block comment whose
 * text starts with a plus sign) opens it or directly follows its first
 * keyword, as in pg_hint_plan and Oracle, or when its planned total cost reaches
 * pg_concurrency_control.bigquery_cost_threshold.  A hint anywhere else,
 * including inside a string literal or a later comment, is ignored, so a
 * value a client passes in cannot change the gate.
 *
 * A statement writes when it is INSERT, UPDATE, DELETE or MERGE, has a
 * data-modifying CTE, locks rows (FOR UPDATE/SHARE, also of a foreign
 * table) or fills a new table (CREATE TABLE AS, SELECT INTO, CREATE
 * MATERIALIZED VIEW); where rules rewrote it into several, when one does.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "executor/execdesc.h"
#include "miscadmin.h"
#include "nodes/plannodes.h"

#include "pcc_compat.h"

#include "pcc_classify.h"

/* Skip white space and comments from p; returns where a token starts. */
static const char *
skip_blanks(const char *p, const char *end, bool *hinted)
{
	while (p < end)
	{
		if (isspace((unsigned char) *p))
			p++;
		else if (p + 1 < end && p[0] == '-' && p[1] == '-')
		{
			/* as the core scanner, a line comment ends at CR or LF */
			const char *open = p;

			while (p < end && *p != '\n' && *p != '\r')
				p++;
			if (p == end)
			{
				p = open;		/* not ended before end: no blank */
				break;
			}
		}
		else if (p + 1 < end && p[0] == '/' && p[1] == '*')
		{
			const char *open = p;
			const char *body = p + 2;
			int			depth = 1;

			p += 2;
			while (p < end && depth > 0)
			{
				if (p + 1 < end && p[0] == '/' && p[1] == '*')
					depth++, p += 2;
				else if (p + 1 < end && p[0] == '*' && p[1] == '/')
					depth--, p += 2;
				else
					p++;
			}
			if (depth > 0)
			{
				p = open;		/* not closed before end: no blank */
				break;
			}
			if (pcc_comment_is_bigsql_hint(body, p - 2))
				*hinted = true;
		}
		else
			break;
	}
	return p;
}

/*
 * Is the comment body [body, end) a hint naming bigsql?  It must start with
 * '+' and carry the word bigsql (any case), so it combines with other
 * hints of pg_hint_plan in the same comment.
 */
bool
pcc_comment_is_bigsql_hint(const char *body, const char *end)
{
	const char *p;

	if (body >= end || *body != '+')
		return false;
	for (p = body + 1; p + 6 <= end; p++)
	{
		bool		starts = p == body + 1 ||
			!(isalnum((unsigned char) p[-1]) || p[-1] == '_');
		bool		ends = p + 6 == end ||
			!(isalnum((unsigned char) p[6]) || p[6] == '_');

		if (starts && ends && pg_strncasecmp(p, "bigsql", 6) == 0)
			return true;
	}
	return false;
}

#ifdef PCC_LOCATION_SKIPS_COMMENTS
/*
 * Where the text in front of the statement at location begins: right
 * after the ';' that ends the previous statement of a multi-statement
 * string, or at the start of the text.  PostgreSQL 18 starts a statement's
 * location at its first token, after the comments in front of it, and
 * between that ';' and location lie only blanks, closed block comments
 * and line comments ended by a line break.  So it is taken to be the last
 * ';' before location from which such blanks lead exactly to location.
 * The ';' that ends the statement before is one, so a ';' in that
 * statement (a literal, say) is never tried, and nothing a client passes
 * in a literal can pass for a hint.  A ';' inside a comment in front of
 * the statement can be taken instead, where the rest of that comment
 * passes for blanks (a line comment in a block comment running to a line
 * break): then the comments it leaves out lose their hint, or one of
 * them, nested, is taken for one.  Walking back keeps a string of many
 * statements linear, and needs none of the core scanner's settings,
 * which its statements may have changed since it was parsed
 * (standard_conforming_strings).  Where location is not a statement's
 * first token, no ';' leads there and the walk finds none.  Earlier
 * versions need none of this: their location is right after the ';'.
 */
static int
gap_start(const char *text, int location)
{
	int			semi = location;

	for (;;)
	{
		bool		hinted;		/* the caller looks at the gap itself */
		int			start;

		CHECK_FOR_INTERRUPTS();
		while (--semi >= 0 && text[semi] != ';')
			;
		start = semi + 1;
		if (skip_blanks(text + start, text + location, &hinted) ==
			text + location)
			return start;
		if (semi < 0)
			return location;
	}
}
#endif

/* Does the statement [text + location, +len) carry the bigsql hint? */
bool
pcc_text_has_bigsql_hint(const char *text, int location, int len)
{
	const char *p;
	const char *end;
	bool		hinted = false;

	if (text == NULL)
		return false;
	p = text + (location > 0 ? location : 0);
	end = len > 0 ? p + len : p + strlen(p);

	/* comments before the first token, on 18 also those before location */
#ifdef PCC_LOCATION_SKIPS_COMMENTS
	if (location > 0)
		skip_blanks(text + gap_start(text, location), p, &hinted);
#endif
	if (hinted)
		return true;
	p = skip_blanks(p, end, &hinted);
	if (hinted)
		return true;
	/* and right after the first keyword */
	while (p < end && (isalnum((unsigned char) *p) || *p == '_'))
		p++;
	skip_blanks(p, end, &hinted);
	return hinted;
}

/* Does the plan's total cost reach the threshold (-1: none)? */
bool
pcc_plan_is_costly(PlannedStmt *ps, double cost_threshold)
{
	return cost_threshold >= 0 && ps->planTree != NULL &&
		ps->planTree->total_cost >= cost_threshold;
}

/*
 * Does the plan write?  Rows it locks count whatever their mark type: a
 * foreign table's are copied (ROW_MARK_COPY) and locked where they live.
 */
static bool
pcc_plan_writes(PlannedStmt *ps)
{
	ListCell   *lc;

	if (ps->commandType != CMD_SELECT || ps->hasModifyingCTE)
		return true;
	foreach(lc, ps->rowMarks)
	{
		PlanRowMark *rc = lfirst_node(PlanRowMark, lc);

		if (rc->strength != LCS_NONE)
			return true;
	}
	return false;
}

/* Does this statement write (see the header comment)? */
bool
pcc_statement_writes(QueryDesc *qd)
{
	if (qd->dest != NULL &&
		(qd->dest->mydest == DestIntoRel || qd->dest->mydest == DestTransientRel))
		return true;
	return pcc_plan_writes(qd->plannedstmt);
}

/*
 * A statement that rules rewrote into several runs them all in one portal,
 * for UPDATE and DELETE the rules' actions first, and the first to start
 * admits the transaction for all: set *big if any of stmts is costly, and
 * *writes if any writes.  Utility statements among them (NOTIFY) run
 * nothing that counts.
 */
void
pcc_plans_classify(List *stmts, double cost_threshold, bool *big,
				   bool *writes)
{
	ListCell   *lc;

	foreach(lc, stmts)
	{
		PlannedStmt *ps = lfirst_node(PlannedStmt, lc);

		if (ps->commandType == CMD_UTILITY)
			continue;
		*big |= pcc_plan_is_costly(ps, cost_threshold);
		*writes |= pcc_plan_writes(ps);
	}
}
