"""``{{ value|masked:hidden }}``: a shown value with the stack's hidden parameter values masked."""
from django import template

from stacks.hidden import mask

register = template.Library()


@register.filter
def masked(value, hidden):
    return mask(value, hidden) if hidden else value
